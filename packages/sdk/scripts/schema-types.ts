import { readFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";

/** TypeScript types for every path and schema of the committed control-plane OpenAPI document. */
export async function generateSchemaTypes(): Promise<string> {
  const document = JSON.parse(
    readFileSync(join(import.meta.dirname, "../../../openapi/control-plane.json"), "utf8"),
  );
  const ast = await openapiTS(document);
  return `// Generated from openapi/control-plane.json by \`npm run generate -w paddock\`; do not edit.\n${astToString(ast)}`;
}
