import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runAs, workingDirectory } from "./process-user.js";

describe("who an envd process runs as", () => {
  test("a named user: uid, gid, home and the login variables", async () => {
    expect(await runAs("nobody")).toEqual({
      uid: 65534,
      gid: 65534,
      home: "/nonexistent",
      env: { HOME: "/nonexistent", USER: "nobody", LOGNAME: "nobody" },
    });
  });

  test("no name: execd's own user and environment; an unknown name is refused", async () => {
    expect(await runAs(undefined)).toEqual({ home: process.env.HOME ?? "/", env: {} });
    await expect(runAs("no-such-user")).rejects.toMatchObject({
      code: "unauthenticated",
      message: "invalid username: 'no-such-user'",
    });
  });

  test("the working directory: the one asked for if it is a directory, else home, else /", () => {
    const dir = mkdtempSync(join(tmpdir(), "envd-cwd-"));
    const file = join(dir, "file");
    writeFileSync(file, "");
    expect(workingDirectory("/tmp", "/nonexistent")).toBe("/tmp");
    expect(workingDirectory(undefined, dir)).toBe(dir);
    expect(workingDirectory(undefined, "/nonexistent")).toBe("/");
    expect(() => workingDirectory("/no/such/dir", dir)).toThrow(/not a directory/);
    expect(() => workingDirectory(file, dir)).toThrow(/not a directory/);
  });
});
