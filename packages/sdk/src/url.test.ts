import { describe, expect, test } from "vitest";
import { encodePart, queryOf } from "./url.js";

describe("strings in URLs", () => {
  test("Unicode text is encoded as encodeURIComponent does", () => {
    for (const text of ["/tmp/a b", "é😀", "a&b=c", "\u202e\ufeff"])
      expect(encodePart(text)).toBe(encodeURIComponent(text));
  });

  test("a lone surrogate goes through as the bytes it would take, for the server to refuse", () => {
    expect(encodePart("/tmp/\ud800")).toBe("%2Ftmp%2F%ED%A0%80");
    expect(encodePart("\udfff😀")).toBe("%ED%BF%BF%F0%9F%98%80");
  });

  test("a query of the defined parameters, lists repeated", () => {
    expect(queryOf({ path: "/a b", depth: 1, recursive: false, skip: undefined, target: ["x", "y"] })).toBe(
      "?path=%2Fa%20b&depth=1&recursive=false&target=x&target=y",
    );
    expect(queryOf({ skip: undefined })).toBe("");
  });
});
