// Runs the README's first TypeScript example, as written, against the Paddock that `make run` started,
// and checks what it prints. A README whose example does not work fails CI.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
if (!example) throw new Error("README.md has no ```ts example");

// Inside the checkout, so `import … from "paddock"` resolves to the workspace SDK as a user's would.
const dir = mkdtempSync(join(root, ".ci/example-"));
try {
  const file = join(dir, "example.ts");
  writeFileSync(file, example);
  const output = execFileSync(process.execPath, ["--import", "tsx", file], {
    encoding: "utf8",
    timeout: 180_000,
  });
  process.stdout.write(output);
  if (output.trim() !== "42")
    throw new Error(`the README example printed ${JSON.stringify(output)}, not "42"`);
  console.log("README example: ok");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
