import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorDefinitions } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { execdErrorsByCode } from "./execd-client.js";

const execdSources = join(import.meta.dirname, "../../../execd/src");

/** Every error code execd's sources can answer with. */
function execdCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of readdirSync(execdSources).filter((name) => name.endsWith(".ts"))) {
    const text = readFileSync(join(execdSources, file), "utf8");
    for (const pattern of [
      /ExecdError\(\s*\d+,\s*"([a-z_]+)"/g,
      /\[\d{3}, "([a-z_]+)"\]/g,
      /code: "([a-z_]+)"/g,
    ])
      for (const match of text.matchAll(pattern)) codes.add(match[1] as string);
  }
  return codes;
}

// Codes that mean the control plane itself called execd wrongly: a fault of ours, by status class.
const controlPlaneFaults = ["unauthorized", "method_not_allowed", "not_implemented", "internal_error"];

describe("execd's error codes", () => {
  test("each one the control plane can meet maps to a registry error by its code", () => {
    const codes = [...execdCodes()].filter((code) => !controlPlaneFaults.includes(code));
    expect(codes.length).toBeGreaterThan(10);
    expect(codes.filter((code) => !execdErrorsByCode[code])).toEqual([]);
  });

  test("execd's own codes are in the one registry under the same name", () => {
    const registered = new Set(errorDefinitions().map((definition) => definition.code));
    for (const code of [
      "context_busy",
      "session_busy",
      "session_dead",
      "not_a_directory",
      "is_a_directory",
    ]) {
      expect(registered.has(code), code).toBe(true);
      expect(execdErrorsByCode[code]?.code).toBe(code);
    }
  });
});
