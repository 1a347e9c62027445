import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { EGRESS_PORT, EGRESS_TOKEN_HEADER } from "@paddock/common/contracts";
import { sandboxCapabilities } from "@paddock/runtime";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
export const WORLD_IMAGE = "paddock/egress-test-world:0.1.0";
export const EGRESS_IMAGE = process.env.PADDOCK_EGRESS_IMAGE ?? "paddock/egress:0.1.0";
const LABEL = "paddock.test=egress";

export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, { maxBuffer: 16 * 2 ** 20 });
  return stdout.trim();
}

/** Runs a shell command in a container; never throws, the exit code is part of the result. */
export async function shell(container: string, script: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run("docker", ["exec", container, "sh", "-c", script]);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: (failed.stdout ?? "") + (failed.stderr ?? "") };
  }
}

/** Builds the sidecar image (skipped when up to date) and the test world's image. */
export async function buildImages(): Promise<void> {
  await run("node", [join(here, "..", "scripts", "build-image.mjs")]);
  await docker(
    "build",
    "-q",
    "-t",
    WORLD_IMAGE,
    "--label",
    LABEL,
    "-f",
    join(here, "fixtures", "world.Dockerfile"),
    join(here, "fixtures"),
  );
}

async function addressOf(container: string): Promise<string> {
  return docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container);
}

export interface World {
  prefix: string;
  /** allowed.test, *.allowed.test and *.wild.test resolve here. */
  http1: string;
  /** denied.test resolves here. */
  http2: string;
  /** dnsmasq on port 53 (the upstream) and on 5353 (a server the sandbox must not reach). */
  dns: string;
  sandbox: string;
  sandboxAddress: string;
  sidecar: string;
  token: string;
}

/**
 * The outside world, entirely on this machine: a Docker network with two HTTP servers, a DNS
 * server, and a "sandbox" with the capabilities the runtime gives sandboxes (no NET_ADMIN), under
 * the engine runtime given (`runsc` is registered with `--network=host`: host-kernel sockets).
 */
export async function createWorld(runtime: "runc" | "runsc"): Promise<World> {
  const prefix = `paddock-egress-test-${randomBytes(4).toString("hex")}`;
  await docker("network", "create", "--label", LABEL, prefix);
  const start = (name: string, ...args: string[]) =>
    docker("run", "-d", "--name", `${prefix}-${name}`, "--label", LABEL, "--network", prefix, ...args);
  const httpd = (text: string) =>
    `mkdir -p /www && echo ${text} > /www/index.html && exec busybox httpd -f -p 80 -h /www`;
  await start("http1", WORLD_IMAGE, "sh", "-c", httpd("hello-one"));
  await start("http2", WORLD_IMAGE, "sh", "-c", httpd("hello-two"));
  const http1 = await addressOf(`${prefix}-http1`);
  const http2 = await addressOf(`${prefix}-http2`);
  const names = `--address=/allowed.test/${http1} --address=/wild.test/${http1} --address=/denied.test/${http2}`;
  const dnsmasq = `dnsmasq --no-resolv --no-hosts ${names}`;
  await start(
    "dns",
    WORLD_IMAGE,
    "sh",
    "-c",
    `${dnsmasq} --port 5353 --pid-file=/tmp/second.pid && exec ${dnsmasq} -k --port 53`,
  );
  const dns = await addressOf(`${prefix}-dns`);
  const sandbox = `${prefix}-sandbox`;
  // The runtime's sandbox capabilities: no NET_ADMIN, no NET_RAW. --dns keeps Docker's resolver local too.
  await start(
    "sandbox",
    "--runtime",
    runtime,
    "--dns",
    dns,
    "--cap-drop",
    "ALL",
    ...sandboxCapabilities.flatMap((capability) => ["--cap-add", capability]),
    "--security-opt",
    "no-new-privileges:true",
    WORLD_IMAGE,
    "sleep",
    "infinity",
  );
  return {
    prefix,
    http1,
    http2,
    dns,
    sandbox,
    sandboxAddress: await addressOf(sandbox),
    sidecar: `${prefix}-sandbox-egress`,
    token: randomBytes(24).toString("base64url"),
  };
}

/**
 * Starts the sidecar as the runtime does: on the host kernel, in the sandbox's network namespace,
 * NET_ADMIN only there.
 */
export async function startSidecar(world: World, policy: unknown): Promise<void> {
  await docker(
    "run",
    "-d",
    "--name",
    world.sidecar,
    "--label",
    LABEL,
    "--runtime",
    "runc",
    "--network",
    `container:${world.sandbox}`,
    "--cap-drop",
    "ALL",
    "--cap-add",
    "NET_ADMIN",
    "--security-opt",
    "no-new-privileges:true",
    "--restart",
    "always",
    "-e",
    `PADDOCK_EGRESS_TOKEN=${world.token}`,
    "-e",
    `PADDOCK_EGRESS_UPSTREAM_DNS=${world.dns}`,
    "-e",
    `PADDOCK_EGRESS_POLICY=${JSON.stringify(policy)}`,
    EGRESS_IMAGE,
  );
  await waitUntil(async () => (await health(world)) === 200, 30_000);
}

export async function health(world: World): Promise<number> {
  try {
    const response = await fetch(`http://${world.sandboxAddress}:${EGRESS_PORT}/healthz`);
    return response.status;
  } catch {
    return 0;
  }
}

export async function removeWorld(world: World): Promise<void> {
  const names = ["sandbox-egress", "sandbox", "dns", "http1", "http2"].map(
    (name) => `${world.prefix}-${name}`,
  );
  await docker("rm", "-f", ...names).catch(() => undefined);
  await docker("network", "rm", world.prefix).catch(() => undefined);
}

/** Calls the sidecar's API from the host, through the sandbox's bridge address. */
export async function api(
  world: World,
  method: string,
  body?: unknown,
  token: string | null = world.token,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers[EGRESS_TOKEN_HEADER] = token;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`http://${world.sandboxAddress}:${EGRESS_PORT}/policy`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What the sandbox sees: an HTTP GET (body or curl's failure) and a DNS lookup's status. */
export const probe = {
  get: (world: World, url: string) => shell(world.sandbox, `curl -sS -m 3 ${url}`),
  status: async (world: World, name: string, server = "") => {
    const result = await shell(world.sandbox, `dig +time=2 +tries=1 ${server} ${name}`);
    return /status: (\w+)/.exec(result.output)?.[1] ?? "no answer";
  },
};
