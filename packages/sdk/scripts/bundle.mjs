// The published package is one ES module: the SDK's code, the little of @paddock/common it uses
// (the SSE parser) and the libraries that pack a build context (tar, the .dockerignore matcher),
// so `npm install paddock` brings no dependency along.
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
  // CommonJS code bundled in (the .dockerignore matcher) requires Node's modules; an ES module
  // has no `require` of its own.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);',
  },
  logLevel: "warning",
});
