import { describe, expect, test } from "vitest";
import { decodeUtf8, illFormedString, isUtf8Query, isWellFormed } from "./unicode.js";

describe("client text is Unicode", () => {
  test("a lone surrogate is ill-formed; pairs, U+202E, U+FEFF and U+FFFD are not", () => {
    expect(["\ud800", "a\udc00", "\udfff\ud800"].map(isWellFormed)).toEqual([false, false, false]);
    expect(["😀", "\u202e", "\ufeff", "\ufffd", ""].map(isWellFormed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  test("finds an ill-formed string anywhere in a JSON value, keys included", () => {
    expect(illFormedString(JSON.parse('{"a":[1,{"b":"\\ud800"}]}'))).toBe("\ud800");
    expect(illFormedString(JSON.parse('{"\\udc00":1}'))).toBe("\udc00");
    expect(illFormedString(JSON.parse('{"a":["😀",null,true,2]}'))).toBeUndefined();
  });

  test("bytes that are not UTF-8 do not decode", () => {
    expect(decodeUtf8(Buffer.from([0x61, 0xff]))).toBeUndefined();
    expect(decodeUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBeUndefined();
    expect(decodeUtf8(Buffer.from("é😀", "utf8"))).toBe("é😀");
  });

  test("a query whose escapes are not UTF-8 is refused; plain, stray % and + are fine", () => {
    expect(["/f?path=%FF", "/f?a=1&path=%ED%A0%80", "/f?path=%C3"].map(isUtf8Query)).toEqual([
      false,
      false,
      false,
    ]);
    expect(["/f", "/f?path=%2Ftmp%2F%C3%A9", "/f?path=50%&x=%zz", "/f?path=a+b"].map(isUtf8Query)).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });
});
