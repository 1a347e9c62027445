import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MarkerSplitter } from "./marker-splitter.js";

const marker = "__end__";

/** Pushes `pieces` through a splitter; what it emitted and what came after the marker. */
function split(pieces: string[]): { emitted: string[]; after: string | undefined } {
  const emitted: string[] = [];
  const splitter = new MarkerSplitter(marker, (text) => emitted.push(text));
  let after: string | undefined;
  for (const piece of pieces) {
    after = splitter.push(piece);
    if (after !== undefined) break;
  }
  return { emitted, after };
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;

describe("MarkerSplitter", () => {
  test("never emits a piece that ends between the halves of a surrogate pair", () => {
    // Held back are the marker's length less one (6 code units): here the cut would fall inside
    // "😀", so the whole pair is held back with them.
    const { emitted } = split(["ab😀cdefg"]);
    expect(emitted).toEqual(["ab"]);
  });

  test("passes text on whole, in order, up to the marker, however it is cut", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string(), fc.array(fc.nat(40)), (text, rest, cuts) => {
        // The marker starts with "_": text without one cannot hold or begin it.
        fc.pre(!text.includes("_"));
        const whole = `${text}${marker}${rest}`;
        const pieces: string[] = [];
        let at = 0;
        for (const cut of cuts) {
          pieces.push(whole.slice(at, at + cut));
          at += cut;
        }
        pieces.push(whole.slice(at));
        const { emitted, after } = split(pieces);
        expect(emitted.join("")).toBe(text);
        for (const piece of emitted) expect(isHigh(piece.charCodeAt(piece.length - 1))).toBe(false);
        expect(after).toBeDefined();
        expect(rest.startsWith(after as string)).toBe(true);
      }),
    );
  });
});
