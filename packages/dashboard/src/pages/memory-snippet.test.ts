import { describe, expect, test } from "vitest";
import { highlightedParts } from "./memory-snippet";

describe("highlightedParts", () => {
  test("splits the snippet on its marks", () => {
    expect(highlightedParts("deploy the <mark>rollout</mark> at <mark>noon</mark>")).toEqual([
      { text: "deploy the ", marked: false },
      { text: "rollout", marked: true },
      { text: " at ", marked: false },
      { text: "noon", marked: true },
    ]);
  });

  test("decodes the five entities, inside and outside marks", () => {
    expect(highlightedParts("&lt;b&gt; &amp; &quot;x&quot; <mark>it&#39;s</mark>")).toEqual([
      { text: '<b> & "x" ', marked: false },
      { text: "it's", marked: true },
    ]);
  });

  test("decodes once: escaped entities stay text", () => {
    expect(highlightedParts("&amp;lt;mark&amp;gt;")).toEqual([{ text: "&lt;mark&gt;", marked: false }]);
  });

  test("escaped tags in the content are text, not marks", () => {
    expect(highlightedParts("&lt;mark&gt;not a match&lt;/mark&gt;")).toEqual([
      { text: "<mark>not a match</mark>", marked: false },
    ]);
  });

  test("a snippet without marks is one plain part; an empty one has none", () => {
    expect(highlightedParts("plain")).toEqual([{ text: "plain", marked: false }]);
    expect(highlightedParts("")).toEqual([]);
    expect(highlightedParts("<mark>all</mark>")).toEqual([{ text: "all", marked: true }]);
  });
});
