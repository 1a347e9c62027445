// Keeps the packages' dependency direction (the README's dependency line): `npx depcruise packages`,
// run by `make lint` and `make test`.
const { readdirSync, readFileSync } = require("node:fs");

/** What each package's own code (not its tests) may import: the README's dependency line. */
const layers = {
  common: [],
  db: ["common"],
  http: ["common"],
  runtime: ["common", "db"],
  "runtime-api": ["common", "http", "runtime"],
  e2b: ["common", "runtime", "runtime-api"],
  "control-plane": ["common", "db", "http", "runtime", "runtime-api", "e2b"],
  server: ["common", "db", "http", "runtime", "runtime-api", "e2b", "control-plane", "dashboard", "mcp"],
  cli: ["common", "runtime", "server", "sdk", "mcp"],
  sdk: ["common"],
  mcp: ["sdk"],
  dashboard: ["common", "sdk"],
  execd: ["common"],
  egress: ["common"],
};

/** Folder under packages/ of each workspace package name. */
const folders = Object.fromEntries(
  readdirSync(`${__dirname}/packages`).map((folder) => [
    JSON.parse(readFileSync(`${__dirname}/packages/${folder}/package.json`, "utf8")).name,
    folder,
  ]),
);
/** Packages built into one file (esbuild, Vite): what they bundle is a devDependency. */
const bundled = ["sdk", "dashboard"];

/** The packages a package's package.json declares; its tests may use its devDependencies too. */
function declared(folder, withDev) {
  const manifest = JSON.parse(readFileSync(`${__dirname}/packages/${folder}/package.json`, "utf8"));
  const names = Object.keys({ ...manifest.dependencies, ...(withDev ? manifest.devDependencies : {}) });
  return names.filter((name) => folders[name]).map((name) => folders[name]);
}

const tests = "(\\.test\\.ts$|/test/|/testing/)";
const others = (folder, allowed) => `^packages/(?!(${[folder, ...allowed].join("|")})/)`;

module.exports = {
  forbidden: [
    ...Object.entries(layers).map(([folder, allowed]) => ({
      name: `${folder}-direction`,
      comment: `${folder} may import only ${allowed.join(", ") || "no other package"} (README's dependency line)`,
      severity: "error",
      from: { path: `^packages/${folder}/src/`, pathNot: tests },
      to: { path: others(folder, allowed) },
    })),
    ...Object.keys(layers).flatMap((folder) => [
      {
        name: `${folder}-undeclared`,
        comment: `an import of a package ${folder}'s package.json does not list in dependencies`,
        severity: "error",
        from: { path: `^packages/${folder}/`, pathNot: tests },
        to: { path: others(folder, declared(folder, bundled.includes(folder))) },
      },
      {
        name: `${folder}-undeclared-in-tests`,
        comment: `an import in ${folder}'s tests of a package its package.json does not list`,
        severity: "error",
        from: { path: `^packages/${folder}/.*${tests}` },
        to: { path: others(folder, declared(folder, true)) },
      },
    ]),
    {
      name: "package-by-name",
      comment: "another package is imported by its name (@paddock/…), never by a relative path",
      severity: "error",
      from: { path: "^packages/([^/]+)/" },
      to: { path: "^packages/", pathNot: "^packages/$1/", dependencyTypes: ["local"] },
    },
    {
      // Type-only imports are erased when compiled, so they order nothing at load time: a class
      // and its collaborator may name each other's types.
      name: "no-cycles",
      comment: "modules of a package import each other in a circle",
      severity: "error",
      from: { path: "^packages/([^/]+)/" },
      to: {
        path: "^packages/$1/",
        circular: true,
        dependencyTypesNot: ["type-only"],
        viaOnly: { dependencyTypesNot: ["type-only"] },
      },
    },
  ],
  options: {
    exclude: { path: "(^|/)(node_modules|dist)/" },
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.tests.json" },
    enhancedResolveOptions: {
      conditionNames: ["@paddock/source", "import", "require", "node", "default", "types"],
      exportsFields: ["exports"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
      mainFields: ["module", "main", "types"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
