import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** One hash of every path and file's bytes below `directory`: it changes if anything there does. */
export function digestOfTree(directory: string): string {
  const hash = createHash("sha256");
  const walk = (path: string) => {
    for (const name of readdirSync(path).sort()) {
      const child = join(path, name);
      hash.update(child);
      if (statSync(child).isDirectory()) walk(child);
      else hash.update(readFileSync(child));
    }
  };
  walk(directory);
  return hash.digest("hex");
}
