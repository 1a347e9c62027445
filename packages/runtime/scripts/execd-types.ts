import { readFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";

/** The committed execd wire definition the client is typed from. */
export const execdDefinitionPath = join(import.meta.dirname, "../src/execd/execd-api.yaml");

/** TypeScript types for every path and schema of the committed execd wire definition. */
export async function generateExecdTypes(): Promise<string> {
  // A field with a default is optional to whoever sends it (`background`, `depth`).
  const ast = await openapiTS(readFileSync(execdDefinitionPath, "utf8"), { defaultNonNullable: false });
  return `// Generated from execd-api.yaml by \`npm run generate -w @paddock/runtime\`; do not edit.\n${astToString(ast)}`;
}
