// Writes src/execd/execd-api.gen.ts (types of execd's wire) from src/execd/execd-api.yaml.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateExecdTypes } from "./execd-types.js";

const target = join(import.meta.dirname, "../src/execd/execd-api.gen.ts");
writeFileSync(target, await generateExecdTypes());
console.log(`wrote ${target}`);
