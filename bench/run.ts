/** `make bench`: every benchmark in turn; each writes bench/results/<name>.json and .md. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const benches = [
  "create",
  "exec",
  "api",
  "pool",
  "density",
  "lifecycle",
  "sleep",
  "egress",
  "templates",
  "clients",
  "replicas",
  "e2b",
];
const tables: string[] = [];
for (const name of benches) {
  console.log(`\n== bench/${name}`);
  const result = spawnSync(
    process.execPath,
    ["--conditions=@paddock/source", "--import", "tsx", join(import.meta.dirname, name, "run.ts")],
    {
      stdio: "inherit",
    },
  );
  if (result.status !== 0) {
    console.error(`bench/${name} failed`);
    process.exitCode = 1;
    continue;
  }
  tables.push(readFileSync(join(import.meta.dirname, "results", `${name}.md`), "utf8"));
}
console.log(`\n${tables.join("\n")}`);
