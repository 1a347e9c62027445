// The published package is one ES module: the SDK's code and the little of @paddock/common it
// uses (the SSE parser), so `npm install paddock` brings no private workspace package along.
// Types come from tsc (dist/*.d.ts), which reference nothing outside the package.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
await build({
  entryPoints: [join(root, "src", "index.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@paddock/source"],
  outfile: join(root, "dist", "paddock.js"),
  legalComments: "none",
  logLevel: "warning",
});
