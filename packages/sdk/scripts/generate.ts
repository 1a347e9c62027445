// Writes src/schema.gen.ts (types of the control-plane API) from openapi/control-plane.json.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateSchemaTypes } from "./schema-types.js";

const target = join(import.meta.dirname, "../src/schema.gen.ts");
writeFileSync(target, await generateSchemaTypes());
console.log(`wrote ${target}`);
