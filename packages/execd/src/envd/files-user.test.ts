import { describe, expect, test } from "vitest";
import { resolvePath } from "./files-user.js";

const user = { name: "user", uid: 1000, gid: 1000, home: "/home/user" };

describe("resolvePath", () => {
  test("resolves as envd does: relative and ~ against the home, absolute as given", () => {
    expect(resolvePath("notes.txt", user)).toBe("/home/user/notes.txt");
    expect(resolvePath("", user)).toBe("/home/user");
    expect(resolvePath("~", user)).toBe("/home/user");
    expect(resolvePath("~/a/../b", user)).toBe("/home/user/b");
    expect(resolvePath("../other", user)).toBe("/home/other");
    expect(resolvePath("/etc//hosts", user)).toBe("/etc/hosts");
  });

  test("refuses what it cannot resolve", () => {
    expect(() => resolvePath("~root/x", user)).toThrow(/another user's home/);
    expect(() => resolvePath("a\0b", user)).toThrow(/NUL/);
    expect(() => resolvePath(42, user)).toThrow(/must be a string/);
  });
});
