import { configDefaults, defineConfig } from "vitest/config";

// Tests import workspace packages through their "@paddock/source" export condition (the .ts
// sources), so no build is needed to run them. `make test` still builds first because the CLI
// and the images run compiled code.
const conditions = ["@paddock/source"];
const guiTemplates = process.env.PADDOCK_TEST_GUI_TEMPLATES === "1";
// Faults that take the whole machine's engine or database down, and the longest attacks, run in
// `make test-slow` alone (files named *.slow.test.ts), one file at a time.
const slow = process.env.PADDOCK_TEST_SLOW === "1";

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // The desktop, browser and editor templates' tests run in `make test-templates` alone.
    include: guiTemplates
      ? ["test/gui-templates/**/*.test.ts"]
      : slow
        ? ["test/**/*.slow.test.ts"]
        : ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: [
      ...configDefaults.exclude,
      ...(guiTemplates ? [] : ["test/gui-templates/**"]),
      ...(slow ? [] : ["test/**/*.slow.test.ts"]),
    ],
    ...(slow ? { fileParallelism: false } : {}),
    // Ceilings for end-to-end tests on two shared cores, not performance assertions.
    testTimeout: 240_000,
    hookTimeout: 180_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
