import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ConfigError, defaultConfig, loadConfig } from "./config.js";

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "paddock-config-")), "paddock.toml");
  writeFileSync(path, text);
  return path;
}

describe("configuration", () => {
  test("every key has a default", () => {
    expect(loadConfig({ env: {} })).toEqual(defaultConfig);
  });

  test("the file overrides defaults and PADDOCK_<SECTION>_<KEY> overrides the file", () => {
    const path = file('[server]\nport = 9000\nhost = "0.0.0.0"\n[pools]\nsizes = { python = 3 }\n');
    const config = loadConfig({
      file: path,
      env: { PADDOCK_SERVER_PORT: "9100", PADDOCK_POOLS_SIZES: "node=2,python=1" },
    });
    expect(config.server.port).toBe(9100);
    expect(config.server.host).toBe("0.0.0.0");
    expect(config.pools.sizes).toEqual({ node: 2, python: 1 });
    expect(loadConfig({ file: path, env: {} }).pools.sizes).toEqual({ python: 3 });
  });

  test("PADDOCK_CONFIG names the file and DATABASE_URL sets the database", () => {
    const path = file('[secure_runtime]\ntype = ""\n');
    const config = loadConfig({ env: { PADDOCK_CONFIG: path, DATABASE_URL: "postgres://x@y/z" } });
    expect(config.secure_runtime.type).toBe("");
    expect(config.database.url).toBe("postgres://x@y/z");
  });

  test("unknown keys, wrong types and bad values are refused with the key named", () => {
    expect(() => loadConfig({ file: file("[server]\nprot = 1\n"), env: {} })).toThrowError(
      /unknown key server.prot/,
    );
    expect(() => loadConfig({ file: file("[srever]\n"), env: {} })).toThrowError(
      /unknown section \[srever\]/,
    );
    expect(() => loadConfig({ env: { PADDOCK_SERVER_PORT: "eighty" } })).toThrowError(
      /server.port must be a number/,
    );
    expect(() => loadConfig({ env: { PADDOCK_RUNTIME_TYPE: "nomad" } })).toThrowError(ConfigError);
    expect(() => loadConfig({ env: { PADDOCK_POOLS_SIZES: "python=-1" } })).toThrowError(
      /pools.sizes must be a table/,
    );
    expect(() => loadConfig({ file: file("not = [valid"), env: {} })).toThrowError(/cannot read config file/);
  });

  test("the Free plan's minutes and the usage intervals take fractions and refuse nonsense", () => {
    const config = loadConfig({
      file: file("[plans]\nfree_minutes = 0.25\n"),
      env: { PADDOCK_USAGE_ENFORCE_INTERVAL_SECONDS: "0.5" },
    });
    expect(config.plans.free_minutes).toBe(0.25);
    expect(config.usage.enforce_interval_seconds).toBe(0.5);
    expect(() => loadConfig({ env: { PADDOCK_PLANS_FREE_MINUTES: "-1" } })).toThrowError(
      /plans.free_minutes must be 0 or more/,
    );
    expect(() => loadConfig({ env: { PADDOCK_USAGE_CHECKPOINT_INTERVAL_SECONDS: "0" } })).toThrowError(
      /usage.checkpoint_interval_seconds must be more than 0/,
    );
  });

  test("plan limits and request rates are set per plan and per kind, and refuse nonsense", () => {
    const config = loadConfig({
      file: file('[plans]\npro_max_disk = "1Ti"\n[rate_limits]\ncommands_per_key = 0\n'),
      env: { PADDOCK_PLANS_FREE_MAX_SANDBOXES: "2" },
    });
    expect(config.plans).toMatchObject({ free_max_sandboxes: 2, free_max_disk: "50Gi", pro_max_disk: "1Ti" });
    expect(config.rate_limits).toMatchObject({ commands_per_key: 0, commands_per_account: 200 });
    expect(() => loadConfig({ file: file('[plans]\nfree_max_disk = "lots"\n'), env: {} })).toThrowError(
      /plans.free_max_disk/,
    );
    expect(() => loadConfig({ file: file("[plans]\nfree_max_api_keys = 1.5\n"), env: {} })).toThrowError(
      /plans.free_max_api_keys must be a whole number/,
    );
    expect(() => loadConfig({ file: file("[rate_limits]\nwindow_seconds = 0\n"), env: {} })).toThrowError(
      /rate_limits.window_seconds must be a whole number, 1 or more/,
    );
    expect(() =>
      loadConfig({ file: file("[rate_limits]\nsignups_per_address_per_hour = -1\n"), env: {} }),
    ).toThrowError(/rate_limits.signups_per_address_per_hour/);
    // A plan's idle default is applied to creates, and so bounded as a caller's idle timeout is.
    expect(() =>
      loadConfig({
        file: file(
          "[server]\nmax_sandbox_timeout_seconds = 1800\n[plans]\npro_idle_timeout_seconds = 3600\n",
        ),
        env: {},
      }),
    ).toThrowError(
      /plans.pro_idle_timeout_seconds \(3600\) is above server.max_sandbox_timeout_seconds \(1800\)/,
    );
  });

  test("volume sizes and the plans' volume counts take sizes and whole numbers, and refuse nonsense", () => {
    const config = loadConfig({
      file: file('[volumes]\ndefault_size = "2Gi"\n[plans]\nfree_max_volumes = 1\n'),
      env: {},
    });
    expect(config.volumes).toEqual({ default_size: "2Gi", max_size: "100Gi" });
    expect(config.plans).toMatchObject({ free_max_volumes: 1, pro_max_volumes: 50 });
    expect(() => loadConfig({ file: file('[volumes]\nmax_size = "huge"\n'), env: {} })).toThrowError(
      /volumes.max_size/,
    );
    expect(() =>
      loadConfig({ file: file('[volumes]\ndefault_size = "2Gi"\nmax_size = "1Gi"\n'), env: {} }),
    ).toThrowError(/volumes.default_size must not exceed volumes.max_size/);
    expect(() => loadConfig({ file: file("[plans]\npro_max_volumes = -1\n"), env: {} })).toThrowError(
      /plans.pro_max_volumes must be a whole number/,
    );
  });

  test("the upload limit defaults to 4 GiB, 0 lifts it, and a fraction or a negative size is refused", () => {
    expect(loadConfig({ env: {} }).server.max_upload_bytes).toBe(4294967296);
    expect(loadConfig({ env: { PADDOCK_SERVER_MAX_UPLOAD_BYTES: "0" } }).server.max_upload_bytes).toBe(0);
    expect(
      loadConfig({ file: file("[server]\nmax_upload_bytes = 1048576\n"), env: {} }).server.max_upload_bytes,
    ).toBe(1048576);
    for (const bad of ["-1", "1.5"]) {
      expect(() => loadConfig({ env: { PADDOCK_SERVER_MAX_UPLOAD_BYTES: bad } })).toThrowError(
        /server.max_upload_bytes must be a whole number of bytes/,
      );
    }
  });

  test("billing and payments take Stripe settings from the file or the environment, and refuse a bad API address", () => {
    const config = loadConfig({
      file: file('[billing]\nstripe_secret_key = "sk_test_file"\npro_price_id = "price_1"\n'),
      env: {
        PADDOCK_BILLING_STRIPE_SECRET_KEY: "sk_test_env",
        PADDOCK_PAYMENTS_STRIPE_API_BASE: "http://127.0.0.1:1",
      },
    });
    expect(config.billing.stripe_secret_key).toBe("sk_test_env");
    expect(config.billing.pro_price_id).toBe("price_1");
    expect(config.billing.stripe_api_base).toBe("https://api.stripe.com");
    expect(config.payments.stripe_api_base).toBe("http://127.0.0.1:1");
    expect(() => loadConfig({ env: { PADDOCK_BILLING_STRIPE_API_BASE: "api.stripe.com" } })).toThrowError(
      /billing.stripe_api_base = "api.stripe.com" is not an http\(s\) URL/,
    );
    expect(() => loadConfig({ env: { PADDOCK_PAYMENTS_STRIPE_API_BASE: "ftp://x" } })).toThrowError(
      /payments.stripe_api_base/,
    );
  });
});
