import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Errors, ExecdErrors, errorDefinitions } from "@paddock/common";
import { execdErrorByCode } from "@paddock/runtime";
import { describe, expect, test } from "vitest";

const execdSources = join(import.meta.dirname, "../../../execd/src");

/** Every error code execd's sources can answer with: the registry definitions they name. */
function execdCodes(): Set<string> {
  const codes = new Set<string>();
  const definitions: Record<string, Record<string, { code: string }>> = { Errors, ExecdErrors };
  for (const file of readdirSync(execdSources, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
    const text = readFileSync(join(execdSources, file), "utf8");
    for (const match of text.matchAll(/\b(Errors|ExecdErrors)\.(\w+)/g)) {
      const code = definitions[match[1] as string]?.[match[2] as string]?.code;
      if (code) codes.add(code);
    }
  }
  return codes;
}

// Codes that mean the control plane itself called execd wrongly: a fault of ours, by status class.
const controlPlaneFaults = ["unauthorized", "method_not_allowed", "not_implemented", "internal_error"];

describe("execd's error codes", () => {
  test("each one the control plane can meet maps to a registry error by its code", () => {
    const codes = [...execdCodes()].filter((code) => !controlPlaneFaults.includes(code));
    expect(codes.length).toBeGreaterThan(10);
    expect(codes.filter((code) => !execdErrorByCode(code))).toEqual([]);
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
      expect(execdErrorByCode(code)?.code).toBe(code);
    }
  });

  test("every code execd answers with is in the registry", () => {
    const registered = new Set(errorDefinitions().map((definition) => definition.code));
    const codes = [...execdCodes()];
    for (const code of ["already_exists", "directory_not_empty", "bash_unavailable", "permission_denied"])
      expect(codes).toContain(code);
    expect(codes.filter((code) => !registered.has(code))).toEqual([]);
  });
});

describe("execd's codes as the control plane answers them", () => {
  test("file errors take the control plane's names, and a missing interpreter is the template's", () => {
    const named = {
      invalid_json: "invalid_request",
      not_found: "file_not_found",
      permission_denied: "permission_denied",
      already_exists: "file_conflict",
      directory_not_empty: "file_conflict",
      range_not_satisfiable: "range_not_satisfiable",
      bash_unavailable: "language_unavailable",
      language_unavailable: "language_unavailable",
      payload_too_large: "payload_too_large",
      context_busy: "context_busy",
    };
    for (const [code, answered] of Object.entries(named))
      expect(execdErrorByCode(code)?.code, code).toBe(answered);
  });

  test("a fault of ours (a wrong token, say) is never passed on as the caller's", () => {
    for (const code of controlPlaneFaults) expect(execdErrorByCode(code), code).toBeUndefined();
    expect(execdErrorByCode("no_such_code")).toBeUndefined();
  });
});
