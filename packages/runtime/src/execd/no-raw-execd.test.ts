import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";

const root = join(import.meta.dirname, "../../../..");

/** Where talking to execd directly is the point: execd itself and its one client. */
const exempt = [
  "packages/execd/",
  "packages/runtime/src/execd/",
  // Where the constants are defined, and where the token header is named to be redacted from logs.
  "packages/common/src/contracts.ts",
  "packages/common/src/logging.ts",
];

/** What only a raw call to execd needs: its token header, its extensions' names, a URL on its port. */
const rawExecd = [
  /X-EXECD-ACCESS-TOKEN/i,
  /\bEXECD_TOKEN_HEADER\b/,
  /\bEXECD_ENV_PATH\b/,
  /\bEXECD_ENVD_PREFIX\b/,
  /\bEXECD_CODE_INTERPRETER_PREFIX\b/,
  /\bEXECD_OUTPUT_FRAMING_HEADER\b/,
  /\bEXECD_DEFAULT_CODE_CONTEXT\b/,
  /:\$\{EXECD_PORT\}/,
  /\b44772\b/,
];

function sources(): string[] {
  return readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) =>
      readdirSync(join(root, "packages", entry.name, "src"), { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
        .map((file) => relative(root, join(root, "packages", entry.name, "src", file))),
    )
    .filter((file) => !exempt.some((prefix) => file.startsWith(prefix)));
}

/** The code of a file without its comments (which may name what they explain). */
function code(file: string): string {
  return readFileSync(join(root, file), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

describe("execd is reached through its client only", () => {
  test("no source outside execd and the client names execd's token header, its extensions or its port in a URL", () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(100);
    const raw = files.flatMap((file) => {
      const text = code(file);
      return rawExecd.filter((pattern) => pattern.test(text)).map((pattern) => `${file}: ${pattern}`);
    });
    expect(raw).toEqual([]);
  });
});
