// Writes openapi/control-plane.json and docs/errors.md from the code (a test fails when either is stale).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateErrorsDoc, generateOpenApi } from "../src/http/openapi.js";

const target = join(import.meta.dirname, "../../../openapi/control-plane.json");
writeFileSync(target, await generateOpenApi());
console.log(`wrote ${target}`);
const errors = join(import.meta.dirname, "../../../docs/errors.md");
writeFileSync(errors, generateErrorsDoc());
console.log(`wrote ${errors}`);
