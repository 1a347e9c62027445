import { describe, expect, test } from "vitest";
import { snapshotProblem } from "./snapshot-image.js";

describe("whether a commit can capture a sandbox's files", () => {
  test("gVisor with its own root overlay cannot; with the overlay off, and other runtimes, can", () => {
    expect(snapshotProblem("gvisor", ["--network=host"])).toMatch(/--overlay2=none/);
    expect(snapshotProblem("gvisor", [])).toMatch(/--overlay2=none/);
    expect(snapshotProblem("gvisor", ["--network=host", "--overlay2=none"])).toBeUndefined();
    expect(snapshotProblem("gvisor", ["-overlay2=none"])).toBeUndefined();
    expect(snapshotProblem("", [])).toBeUndefined();
    expect(snapshotProblem("kata", [])).toBeUndefined();
  });
});
