import { existsSync, readFileSync } from "node:fs";
import { parse as parseToml } from "smol-toml";
import { parseMemoryBytes } from "./quantities.js";

/**
 * Paddock configuration. Every key has a default here; a TOML file (`--config`, `PADDOCK_CONFIG`
 * or `./paddock.toml`) overrides defaults, and `PADDOCK_<SECTION>_<KEY>` environment variables
 * override the file. `DATABASE_URL` is honoured for `[database] url`.
 */
export const defaultConfig = {
  server: {
    host: "127.0.0.1",
    port: 8080,
    /** Public base URL used in endpoint URLs; empty means http://host:port. */
    public_url: "",
    /** Key for the /v1 runtime API (RUNTIME-API-KEY / OPEN-SANDBOX-API-KEY); empty = generate one. */
    api_key: "",
    /** Server secret from which per-sandbox tokens are derived; empty = generated into data_dir/secret.key. */
    secret_key: "",
    /** Run the /v1 runtime API without a key. Never the default. */
    allow_unauthenticated: false,
    /** Names this server's sandboxes on a shared engine; servers with different names never touch each other's. */
    instance: "default",
    /** Where the SQLite database, generated keys and diagnostics live. */
    data_dir: ".paddock",
    /** Longest `timeout` a create may ask for, in seconds. */
    max_sandbox_timeout_seconds: 7 * 24 * 3600,
    /** Diagnostics larger than this are offered as a download URL instead of inline. */
    diagnostics_inline_limit_bytes: 64 * 1024,
    /** Most bytes one file upload into a sandbox may carry (`/files/upload`, raw `/files/write`); 0 = no limit. */
    max_upload_bytes: 4 * 2 ** 30,
    /**
     * Reverse proxies (addresses or CIDRs) whose `X-Forwarded-For` names the client. Empty: the
     * connection's own address is the client's (rate limits and login throttling count it).
     */
    trusted_proxies: [] as string[],
    log_level: "info",
  },
  database: {
    /** Empty: SQLite file in data_dir. `sqlite:/path/file.db` or `postgres://…` otherwise. */
    url: "",
    /**
     * With PostgreSQL, several servers (replicas) may share the database. Work that must happen
     * once (expiry, reconciliation, pool refills, usage checkpoints, plan enforcement) runs under
     * leases held this many seconds unrenewed: when a replica dies, another takes over within it.
     */
    lease_seconds: 15,
  },
  runtime: {
    type: "docker" as "docker" | "kubernetes",
    execd_image: "paddock/execd:0.1.0",
    /** Seconds a create may take before the sandbox is marked Failed and cleaned up. */
    create_timeout_seconds: 60,
    /**
     * Seconds a sandbox stays paused in memory (frozen, its pages on the host) before it moves to
     * disk and leaves the host's memory (decision 0190); 0: never.
     */
    disk_pause_after_seconds: 600,
  },
  secure_runtime: {
    /** "" (standard runc), "gvisor", "kata", "firecracker", or "auto": gVisor when the engine has it. */
    type: "auto" as "auto" | "" | "gvisor" | "kata" | "firecracker",
    /** Engine runtime name in Docker mode; empty = the usual name for the type (runsc, kata-runtime). */
    docker_runtime: "",
    /**
     * Docker mode, gVisor: the engine runtime for sandboxes without a network policy, runsc on its
     * own network stack (`--network=sandbox`; setup registers it as "runsc-netstack"). Their
     * pauses to disk keep processes and memory (a checkpoint, decision 0194). Empty: every gVisor
     * sandbox uses docker_runtime (host networking) and pauses to disk with its filesystem only.
     */
    netstack_runtime: "",
    /** RuntimeClass name in Kubernetes mode; empty = the usual name for the type. */
    k8s_runtime_class: "",
  },
  docker: {
    socket_path: "/var/run/docker.sock",
    /** Dedicated bridge network for sandboxes (inter-container traffic off). */
    network: "paddock-sandboxes",
    subnet: "10.213.0.0/16",
    /** Drop traffic from sandboxes to this host's own addresses and to 169.254.169.254. */
    block_host_access: true,
    pids_limit: 512,
    default_cpu: "1",
    default_memory: "1Gi",
    /**
     * Disk a sandbox may write (its writable layer), unless its create's `resourceLimits` names
     * `ephemeral-storage`; enforced with a filesystem of that size per sandbox. Empty: no quota.
     */
    default_disk: "10Gi",
    /** Host-path volumes are refused unless their path is under one of these prefixes. */
    allowed_host_paths: [] as string[],
  },
  kubernetes: {
    /** Namespace of the sandbox pods, their Secrets, the NetworkPolicy and the snapshot Jobs. */
    namespace: "paddock",
    /** Kubeconfig file; empty = $KUBECONFIG, else ~/.kube/config, else the pod's service account (in-cluster). */
    kubeconfig: "",
    /** Labels (`key=value,...`) of the Paddock server's pods, the only pods allowed to connect to sandboxes; empty = none. */
    server_pod_selector: "app.kubernetes.io/name=paddock",
    /** Labels of the namespaces those server pods run in; empty = the sandbox namespace itself. */
    server_namespace_selector: "",
    /** Addresses (CIDRs) of Paddock servers outside the cluster allowed to connect to sandboxes, e.g. "203.0.113.7/32". */
    server_cidrs: [] as string[],
    /** The cluster's pod and service CIDRs (IPv4), kept out of sandbox egress besides the private ranges. */
    cluster_cidrs: [] as string[],
    /** Registry (`host[:port]/path`) that pause and snapshots push images to; empty = pause and snapshots off. */
    snapshot_registry: "",
    /** Image with `nerdctl` and `sh` that commits and pushes a sandbox's filesystem on its node (privileged Job). */
    snapshot_image: "",
    /** The containerd socket on the nodes, mounted into snapshot Jobs. */
    containerd_socket: "/run/containerd/containerd.sock",
    /** kubernetes.io/dockerconfigjson Secret in the namespace for pulling from and pushing to snapshot_registry; empty = none. */
    image_pull_secret: "",
    /** Seconds a snapshot Job (commit + push) may take before it is abandoned. */
    snapshot_timeout_seconds: 600,
  },
  egress: {
    image: "paddock/egress:0.1.0",
    /**
     * Resolver the sidecar forwards allowed names to (`ip` or `ip:port`). Empty: the first
     * non-loopback nameserver of this host's /etc/resolv.conf, the one Docker forwards to.
     */
    upstream_dns: "",
  },
  volumes: {
    /** Size of a volume whose create names none (control plane, or a runtime API `pvc` made on demand). */
    default_size: "1Gi",
    /** Largest volume one create may ask for. */
    max_size: "100Gi",
  },
  templates: {
    /** Directory of `<id>/template.toml` files. */
    dir: "templates",
    /** Account template builds this server runs at once; the others wait their turn (decision 0198). */
    max_concurrent_builds: 2,
    /** Longest an account's template build may run (decision 0198). */
    build_timeout_seconds: 1800,
    /** CPUs and memory each build step gets. */
    build_cpu: "2",
    build_memory: "4Gi",
    /** Largest image a build may make, every layer counted; a build past it stops. */
    max_image_size: "20Gi",
    /** Largest archive of build files (a context, or E2B's files) one upload may carry. */
    max_build_files_bytes: 2 * 2 ** 30,
  },
  pools: {
    /** Warm sandboxes kept ready per template id, e.g. `{ python = 5, node = 2 }` (env: "python=5,node=2"). */
    sizes: {} as Record<string, number>,
    /** Upper bound on warm sandboxes across all templates. */
    max_total: 50,
    /** How many warm sandboxes may be in creation at once (keeps refills from starving other work). */
    refill_concurrency: 2,
  },
  plans: {
    /** Sandbox minutes the Free plan includes per calendar month (UTC); fractions allowed. */
    free_minutes: 100,
    /** Sandboxes an account may have at once: running, paused, being created or failed (not yet deleted). */
    free_max_sandboxes: 5,
    /** Sum of the disk quotas of an account's sandboxes (each its `ephemeral-storage` or `docker.default_disk`); "" = no cap. */
    free_max_disk: "50Gi",
    /** API keys an account may hold. */
    free_max_api_keys: 20,
    /**
     * A sandbox created without its own `lifecycle.idleTimeout` pauses after this many seconds
     * without use (decision 0190); 0: never. A forgotten sandbox then costs no running time.
     */
    free_idle_timeout_seconds: 900,
    /** A sandbox paused this many days is deleted, unless its create set `lifecycle.maxPaused`; 0: kept. */
    free_max_paused_days: 30,
    /** Volumes an account may hold; their sizes count against `<plan>_max_disk` with its sandboxes'. */
    free_max_volumes: 5,
    /** Templates an account may build and keep (decision 0198). */
    free_max_templates: 10,
    /** Template builds an account may run at once. */
    free_max_template_builds: 2,
    pro_max_sandboxes: 50,
    pro_max_disk: "500Gi",
    pro_max_volumes: 50,
    pro_max_api_keys: 100,
    pro_idle_timeout_seconds: 3600,
    pro_max_paused_days: 30,
    pro_max_templates: 100,
    pro_max_template_builds: 5,
  },
  /**
   * Request rates, counted in the database (shared by replicas) in fixed windows. Creates,
   * commands and file calls are counted per credential (API key or session) and per account, in
   * windows of `window_seconds`. 0 turns a limit off.
   */
  rate_limits: {
    window_seconds: 10,
    creates_per_key: 10,
    creates_per_account: 20,
    commands_per_key: 100,
    commands_per_account: 200,
    file_calls_per_key: 200,
    file_calls_per_account: 400,
    /** Sign-ups per client address (IPv6: per /64) per hour. */
    signups_per_address_per_hour: 20,
    /** Failed logins per email and client address per minute. */
    login_failures_per_minute: 5,
    /** Failed logins per email per minute from addresses that never logged in to that account. */
    login_failures_per_email_per_minute: 10,
    /** Failed logins per client address per minute, to accounts it never logged in to. */
    login_failures_per_address_per_minute: 30,
  },
  usage: {
    /** Seconds between writes of running sandboxes' time to the database: the most a crash can lose. */
    checkpoint_interval_seconds: 30,
    /** Seconds between checks that pause the running sandboxes of accounts past their plan's minutes. */
    enforce_interval_seconds: 5,
  },
  billing: {
    /** The platform's Stripe secret key; billing routes answer 503 billing_not_configured while empty. */
    stripe_secret_key: "",
    /** Signing secret of the Stripe webhook endpoint (`whsec_…`) that posts to /billing/webhook. */
    stripe_webhook_secret: "",
    /** Stripe's API address; tests point it at a local stand-in. */
    stripe_api_base: "https://api.stripe.com",
    /** The Stripe Price (`price_…`) a Pro subscription is sold at. */
    pro_price_id: "",
    /** Where Checkout sends the buyer after paying or giving up; empty = the server's public URL. */
    success_url: "",
    cancel_url: "",
    /** Oldest webhook signature timestamp accepted, in seconds (replay protection). */
    webhook_tolerance_seconds: 300,
  },
  payments: {
    /** Stripe's API address for the users' own keys (bring your own key); tests point it at a stand-in. */
    stripe_api_base: "https://api.stripe.com",
  },
};

export type PaddockConfig = typeof defaultConfig;

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface LoadConfigOptions {
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  overrides?: DeepPartial<PaddockConfig>;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export function loadConfig(options: LoadConfigOptions = {}): PaddockConfig {
  const env = options.env ?? process.env;
  const config = structuredClone(defaultConfig) as PaddockConfig;
  const file =
    options.file ?? env.PADDOCK_CONFIG ?? (existsSync("paddock.toml") ? "paddock.toml" : undefined);
  if (file) {
    let parsed: Record<string, unknown>;
    try {
      parsed = parseToml(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`);
    }
    merge(config, parsed, file);
  }
  applyEnv(config, env);
  if (options.overrides) merge(config, options.overrides as Record<string, unknown>, "overrides");
  validate(config);
  return config;
}

type Sections = Record<string, Record<string, unknown>>;

function merge(config: PaddockConfig, source: Record<string, unknown>, origin: string): void {
  const sections = config as unknown as Sections;
  for (const [sectionName, section] of Object.entries(source)) {
    const target = sections[sectionName];
    if (!target) throw new ConfigError(`${origin}: unknown section [${sectionName}]`);
    if (!section || typeof section !== "object" || Array.isArray(section)) {
      throw new ConfigError(`${origin}: [${sectionName}] must be a table`);
    }
    for (const [key, value] of Object.entries(section)) {
      if (!(key in target)) throw new ConfigError(`${origin}: unknown key ${sectionName}.${key}`);
      if (value === undefined) continue;
      target[key] = coerce(target[key], value, `${sectionName}.${key}`, origin);
    }
  }
}

function applyEnv(config: PaddockConfig, env: NodeJS.ProcessEnv): void {
  const sections = config as unknown as Sections;
  for (const [sectionName, section] of Object.entries(sections)) {
    for (const key of Object.keys(section)) {
      const name = `PADDOCK_${sectionName}_${key}`.toUpperCase();
      const value = env[name];
      if (value !== undefined) section[key] = coerce(section[key], value, `${sectionName}.${key}`, name);
    }
  }
  if (env.DATABASE_URL && !env.PADDOCK_DATABASE_URL) config.database.url = env.DATABASE_URL;
}

function coerce(current: unknown, value: unknown, key: string, origin: string): unknown {
  const fail = (): never => {
    const kind = Array.isArray(current)
      ? "list"
      : typeof current === "object"
        ? "table of numbers"
        : typeof current;
    throw new ConfigError(`${origin}: ${key} must be a ${kind}`);
  };
  if (current && typeof current === "object" && !Array.isArray(current)) return coerceCounts(value, fail);
  if (Array.isArray(current)) {
    if (typeof value === "string")
      return value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
    return fail();
  }
  if (typeof current === "number") {
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    return typeof number === "number" && Number.isFinite(number) ? number : fail();
  }
  if (typeof current === "boolean") {
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "1") return true;
    if (value === "false" || value === "0") return false;
    return fail();
  }
  return typeof value === "string" ? value : fail();
}

/** A table of non-negative integers, from TOML (`{ a = 1 }`) or an env string (`a=1,b=2`). */
function coerceCounts(value: unknown, fail: () => never): Record<string, number> {
  const entries =
    typeof value === "string"
      ? value
          .split(",")
          .filter((part) => part.trim())
          .map((part) => part.split("=").map((piece) => piece.trim()))
      : value && typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value)
        : fail();
  const counts: Record<string, number> = {};
  for (const [name, raw] of entries as Array<[string | undefined, unknown]>) {
    const count = typeof raw === "string" ? Number(raw) : raw;
    if (!name || typeof count !== "number" || !Number.isInteger(count) || count < 0) fail();
    counts[name as string] = count as number;
  }
  return counts;
}

function validate(config: PaddockConfig): void {
  const oneOf = (key: string, value: string, allowed: readonly string[]) => {
    if (!allowed.includes(value)) {
      throw new ConfigError(`${key} = "${value}" is not one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
    }
  };
  oneOf("runtime.type", config.runtime.type, ["docker", "kubernetes"]);
  oneOf("secure_runtime.type", config.secure_runtime.type, ["auto", "", "gvisor", "kata", "firecracker"]);
  if (!Number.isInteger(config.server.port) || config.server.port < 0 || config.server.port > 65535) {
    throw new ConfigError(`server.port must be an integer between 0 and 65535`);
  }
  if (!(config.database.lease_seconds >= 1))
    throw new ConfigError("database.lease_seconds must be 1 or more");
  if (!(config.plans.free_minutes >= 0)) throw new ConfigError("plans.free_minutes must be 0 or more");
  validateLimits(config);
  validateVolumes(config.volumes);
  if (!Number.isSafeInteger(config.server.max_upload_bytes) || config.server.max_upload_bytes < 0) {
    throw new ConfigError("server.max_upload_bytes must be a whole number of bytes, 0 or more (0: no limit)");
  }
  for (const key of ["checkpoint_interval_seconds", "enforce_interval_seconds"] as const) {
    if (!(config.usage[key] > 0)) throw new ConfigError(`usage.${key} must be more than 0`);
  }
  for (const [key, value] of [
    ["billing.stripe_api_base", config.billing.stripe_api_base],
    ["payments.stripe_api_base", config.payments.stripe_api_base],
  ] as const) {
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      throw new ConfigError(`${key} = "${value}" is not an http(s) URL`);
    }
  }
  if (!(config.billing.webhook_tolerance_seconds > 0)) {
    throw new ConfigError("billing.webhook_tolerance_seconds must be more than 0");
  }
  if (config.docker.default_disk && parseMemoryBytes(config.docker.default_disk) === undefined) {
    throw new ConfigError(`docker.default_disk = "${config.docker.default_disk}" is not a size like "10Gi"`);
  }
  validateKubernetes(config.kubernetes);
  validateTemplateBuilds(config.templates);
  const diskPause = config.runtime.disk_pause_after_seconds;
  if (!Number.isSafeInteger(diskPause) || diskPause < 0)
    throw new ConfigError(
      "runtime.disk_pause_after_seconds must be a whole number of seconds, 0 (never) or more",
    );
  for (const prefix of config.docker.allowed_host_paths) {
    if (!prefix.startsWith("/"))
      throw new ConfigError(`docker.allowed_host_paths: ${prefix} is not absolute`);
  }
}

function validateTemplateBuilds(templates: PaddockConfig["templates"]): void {
  if (!Number.isSafeInteger(templates.max_concurrent_builds) || templates.max_concurrent_builds < 1)
    throw new ConfigError("templates.max_concurrent_builds must be a whole number, 1 or more");
  if (!Number.isSafeInteger(templates.build_timeout_seconds) || templates.build_timeout_seconds < 1)
    throw new ConfigError("templates.build_timeout_seconds must be a whole number of seconds, 1 or more");
  if (!(Number(templates.build_cpu) > 0))
    throw new ConfigError(`templates.build_cpu = "${templates.build_cpu}" is not a number of CPUs like "2"`);
  for (const key of ["build_memory", "max_image_size"] as const) {
    if (!(parseMemoryBytes(templates[key]) ?? 0))
      throw new ConfigError(`templates.${key} = "${templates[key]}" is not a size like "4Gi"`);
  }
  if (!Number.isSafeInteger(templates.max_build_files_bytes) || templates.max_build_files_bytes < 1)
    throw new ConfigError("templates.max_build_files_bytes must be a whole number of bytes, 1 or more");
}

function validateVolumes(volumes: PaddockConfig["volumes"]): void {
  const defaultBytes = parseMemoryBytes(volumes.default_size);
  const maxBytes = parseMemoryBytes(volumes.max_size);
  if (defaultBytes === undefined)
    throw new ConfigError(`volumes.default_size = "${volumes.default_size}" is not a size like "1Gi"`);
  if (maxBytes === undefined)
    throw new ConfigError(`volumes.max_size = "${volumes.max_size}" is not a size like "100Gi"`);
  if (defaultBytes > maxBytes) throw new ConfigError("volumes.default_size must not exceed volumes.max_size");
}

function validateLimits(config: PaddockConfig): void {
  const wholeNumber = (key: string, value: number, minimum: number) => {
    if (!Number.isSafeInteger(value) || value < minimum)
      throw new ConfigError(`${key} must be a whole number, ${minimum} or more`);
  };
  for (const plan of ["free", "pro"] as const) {
    wholeNumber(`plans.${plan}_max_sandboxes`, config.plans[`${plan}_max_sandboxes`], 0);
    wholeNumber(`plans.${plan}_max_api_keys`, config.plans[`${plan}_max_api_keys`], 0);
    wholeNumber(`plans.${plan}_idle_timeout_seconds`, config.plans[`${plan}_idle_timeout_seconds`], 0);
    // The default lands on every create that does not set one, where it is bounded as a caller's is.
    if (config.plans[`${plan}_idle_timeout_seconds`] > config.server.max_sandbox_timeout_seconds)
      throw new ConfigError(
        `plans.${plan}_idle_timeout_seconds (${config.plans[`${plan}_idle_timeout_seconds`]}) is above server.max_sandbox_timeout_seconds (${config.server.max_sandbox_timeout_seconds}); lower it, or raise the maximum`,
      );
    wholeNumber(`plans.${plan}_max_paused_days`, config.plans[`${plan}_max_paused_days`], 0);
    wholeNumber(`plans.${plan}_max_volumes`, config.plans[`${plan}_max_volumes`], 0);
    wholeNumber(`plans.${plan}_max_templates`, config.plans[`${plan}_max_templates`], 0);
    wholeNumber(`plans.${plan}_max_template_builds`, config.plans[`${plan}_max_template_builds`], 0);
    const disk = config.plans[`${plan}_max_disk`];
    if (disk && parseMemoryBytes(disk) === undefined)
      throw new ConfigError(
        `plans.${plan}_max_disk = "${disk}" is not a size like "50Gi" (or "" for no cap)`,
      );
  }
  for (const [key, value] of Object.entries(config.rate_limits)) {
    wholeNumber(`rate_limits.${key}`, value, key === "window_seconds" ? 1 : 0);
  }
}

function validateKubernetes(kubernetes: PaddockConfig["kubernetes"]): void {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(kubernetes.namespace)) {
    throw new ConfigError(
      `kubernetes.namespace = "${kubernetes.namespace}" is not a Kubernetes namespace name`,
    );
  }
  for (const key of ["server_pod_selector", "server_namespace_selector"] as const) {
    const pairs = kubernetes[key].split(",").filter((pair) => pair.trim());
    if (pairs.some((pair) => !/^[^=\s]+=[^=\s]*$/.test(pair.trim()))) {
      throw new ConfigError(`kubernetes.${key} = "${kubernetes[key]}" is not a list of key=value labels`);
    }
  }
  const ipv4Cidr = /^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/;
  for (const key of ["server_cidrs", "cluster_cidrs"] as const) {
    for (const cidr of kubernetes[key]) {
      if (!ipv4Cidr.test(cidr)) throw new ConfigError(`kubernetes.${key}: ${cidr} is not an IPv4 CIDR`);
    }
  }
  if (kubernetes.snapshot_registry && !kubernetes.snapshot_image) {
    throw new ConfigError("kubernetes.snapshot_registry is set but kubernetes.snapshot_image is empty");
  }
  if (!(kubernetes.snapshot_timeout_seconds > 0)) {
    throw new ConfigError("kubernetes.snapshot_timeout_seconds must be more than 0");
  }
}
