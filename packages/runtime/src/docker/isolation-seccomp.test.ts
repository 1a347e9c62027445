import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { runcIsolationHardening } from "./isolation-seccomp.js";

describe("runc's seccomp profile for isolated sessions", () => {
  const dir = mkdtempSync(join(tmpdir(), "paddock-seccomp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("is Docker's profile without io_uring, plus unshare limited to user, mount and PID namespaces, and mount", async () => {
    const base = {
      defaultAction: "SCMP_ACT_ERRNO",
      syscalls: [
        { names: ["read"], action: "SCMP_ACT_ALLOW" },
        {
          names: ["io_uring_enter", "io_uring_register", "io_uring_setup", "write"],
          action: "SCMP_ACT_ALLOW",
        },
      ],
    };
    const path = join(dir, "default.json");
    writeFileSync(path, JSON.stringify(base));
    const hardening = await runcIsolationHardening(path);
    expect(hardening?.capAdd).toEqual(["SETFCAP"]);
    expect(hardening?.securityOpt.startsWith("seccomp=")).toBe(true);
    const profile = JSON.parse(hardening?.securityOpt.slice("seccomp=".length) ?? "{}");
    expect(profile.defaultAction).toBe("SCMP_ACT_ERRNO");
    expect(profile.syscalls[0]).toEqual(base.syscalls[0]);
    expect(profile.syscalls[1]).toEqual({ names: ["write"], action: "SCMP_ACT_ALLOW" });
    const unshare = profile.syscalls.find((rule: { names: string[] }) => rule.names.includes("unshare"));
    const mask = unshare.args[0].value;
    // Masked with the refused flags, the argument must be 0: user, mount and PID pass, network does not.
    const allowed = (flags: number) => (flags & mask) >>> 0 === unshare.args[0].valueTwo;
    expect(allowed(0x10000000 | 0x00020000 | 0x20000000)).toBe(true);
    expect(allowed(0x10000000 | 0x40000000)).toBe(false); // CLONE_NEWNET
    expect(allowed(0x08000000)).toBe(false); // CLONE_NEWIPC
    expect(unshare.args[0].op).toBe("SCMP_CMP_MASKED_EQ");
    expect(profile.syscalls.some((rule: { names: string[] }) => rule.names.includes("setns"))).toBe(false);
  });

  test("is absent when Docker's profile is not on the machine", async () => {
    expect(await runcIsolationHardening(join(dir, "missing.json"))).toBeUndefined();
    writeFileSync(join(dir, "broken.json"), "{");
    expect(await runcIsolationHardening(join(dir, "broken.json"))).toBeUndefined();
  });
});
