import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_ENVD_USER_ENV } from "@paddock/common/contracts";
import { describe, expect, test } from "vitest";
import { Accounts } from "./files-user.js";
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

  test("no name in a sandbox whose image names a default user (E2B's base): that user", async () => {
    process.env[EXECD_ENVD_USER_ENV] = "nobody";
    try {
      expect(await runAs(undefined)).toMatchObject({ uid: 65534, home: "/nonexistent" });
      expect(await runAs("")).toMatchObject({ uid: 65534 });
      expect(await runAs("root")).toMatchObject({ uid: 0, home: "/root" });
      expect((await Accounts.read()).user(undefined)).toMatchObject({ name: "nobody", uid: 65534 });
    } finally {
      delete process.env[EXECD_ENVD_USER_ENV];
    }
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
