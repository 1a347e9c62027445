import { describe, expect, test } from "vitest";
import { globToRegExp } from "./glob.js";

const files = ["a.txt", "b.md", "notes-1.txt", "sub/c.txt", "sub/deep/d.md", ".hidden.txt"];
const matching = (pattern: string) => files.filter((file) => globToRegExp(pattern).test(file));

describe("glob patterns over paths relative to the search root", () => {
  test("a pattern without a slash matches base names at any depth", () => {
    expect(matching("*.txt")).toEqual(["a.txt", "notes-1.txt", "sub/c.txt", ".hidden.txt"]);
    expect(matching("**")).toEqual(files);
    expect(matching("?.md")).toEqual(["b.md", "sub/deep/d.md"]);
    expect(matching("[ab].*")).toEqual(["a.txt", "b.md"]);
    expect(matching("[!ab].txt")).toEqual(["sub/c.txt"]);
  });

  test("a pattern with a slash matches the relative path", () => {
    expect(matching("sub/*.txt")).toEqual(["sub/c.txt"]);
    expect(matching("sub/**/*.md")).toEqual(["sub/deep/d.md"]);
    expect(matching("**/*.md")).toEqual(["b.md", "sub/deep/d.md"]);
  });

  test("each alternative in braces is a glob", () => {
    expect(matching("{*.txt,*.md}")).toEqual(files);
    expect(matching("{notes*,b*}")).toEqual(["b.md", "notes-1.txt"]);
    expect(matching("*.{txt,md}")).toEqual(files);
    expect(matching("{a,{b,c}}.*")).toEqual(["a.txt", "b.md", "sub/c.txt"]);
  });

  test("regular expression characters are literal", () => {
    expect(globToRegExp("a+(b).txt").test("a+(b).txt")).toBe(true);
    expect(globToRegExp("a+(b).txt").test("aa(b)xtxt")).toBe(false);
  });
});
