import { defineConfig } from "vitest/config";

// Tests import workspace packages through their "@paddock/source" export condition (the .ts
// sources), so no build is needed to run them. `make test` still builds first because the CLI
// and the images run compiled code.
const conditions = ["@paddock/source"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Ceilings for end-to-end tests on two shared cores, not performance assertions.
    testTimeout: 240_000,
    hookTimeout: 180_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
