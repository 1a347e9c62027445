import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase } from "@paddock/db";
import { Paddock } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../support/paddock-process.js";

// Attacks on the streams that carry a sandbox's output (decision 0171): clients that read a
// command's 2 GB of output slowly (1 byte a second) or not at all. The server's memory stays
// bounded, another account's requests keep their speed, the producer in the sandbox is held back
// in its own pipe, and when the clients leave it is gone and the server's memory is as before.
//
// The server runs as its own `paddock serve` process, so its resident memory (VmRSS) is the
// server's alone: the test's clients and their buffers are not in it.

const twoGigabytes = "head -c 2000000000 /dev/zero | tr '\\0' A";
/**
 * Growth of the server's resident memory allowed during an attack (it held GiBs unbounded). Not
 * all of it is held: Node 24's young generation grows with the allocation rate (a cell printing
 * without end reached 151 MiB once, 27–143 MiB otherwise, on Node 20 under 100).
 */
const maxGrowthMiB = 256;
/** How long each attack runs before it is measured. */
const attackMs = 20_000;
/**
 * Another account's reads may slow down at most twofold under attack, plus 25 ms: two shared
 * cores run the server, the sandbox and the test, so a few ms of noise are not the attack's.
 */
const latencyFloorMs = 25;

const runtimes = [
  { name: "gVisor", config: [] },
  { name: "runc", config: ["[secure_runtime]", 'type = ""'] },
];

describe.each(runtimes)("backpressure on sandbox output streams under $name", ({ config }) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let server: PaddockProcess;
  let attacker: User;
  let bystander: User;

  beforeAll(async () => {
    database = await createTestDatabase("sqlite");
    dir = mkdtempSync(join(tmpdir(), "paddock-backpressure-"));
    server = await serve(writeServerConfig(dir, database.url, config).file);
    [attacker, bystander] = await Promise.all([user(server.url, "attacker"), user(server.url, "bystander")]);
  });
  afterAll(async () => {
    for (const account of [attacker, bystander])
      if (account) await api(account, `/sandboxes/${account.sandbox}`, { method: "DELETE" }).catch(() => {});
    await stop(server?.child, "SIGTERM");
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("/run/stream: three unread readers and a slow one of 2 GB each hold the command back", async () => {
    const pid = server.child.pid as number;
    await bystanderLatency(bystander); // warm up
    const rssBefore = await settledRss(pid);
    const baselineMs = await bystanderLatency(bystander);

    const body = { command: twoGigabytes, timeoutMs: 600_000 };
    const readers = [
      ...[1, 2, 3].map(() => openStream(attacker, "run/stream", body, "unread")),
      openStream(attacker, "run/stream", body, "slow"),
    ];
    await Promise.all(readers.map((reader) => reader.started));
    const peak = watchRss(pid);
    await sleep(attackMs / 2);
    const attackMs50 = await bystanderLatency(bystander);
    await sleep(attackMs / 2);
    // The producers are there and idle: blocked on their full pipes, not writing on.
    const producers = await producerCpu(attacker);
    const rssDuring = peak.stop();
    console.log(
      `RSS ${rssBefore} MiB before, peak ${rssDuring} MiB during; bystander p50 ${baselineMs} ms before, ${attackMs50} ms during; producers ${JSON.stringify(producers)}`,
    );
    expect(producers.count).toBe(2 * readers.length);
    expect(producers.ticksPerSecond).toBeLessThan(20);
    expect(rssDuring - rssBefore).toBeLessThan(maxGrowthMiB);
    expect(attackMs50).toBeLessThanOrEqual(2 * baselineMs + latencyFloorMs);

    for (const reader of readers) reader.close();
    // The commands die with their streams, and the server lets go of what it held for them.
    await expect.poll(async () => (await producerCpu(attacker)).count, { timeout: 15_000 }).toBe(0);
    const rssAfter = await settledRss(pid);
    console.log(`RSS ${rssAfter} MiB after the readers left`);
    expect(rssAfter - rssBefore).toBeLessThan(maxGrowthMiB);
  });

  test("/code: a cell printing without end, to a client that waits for its answer and leaves", async () => {
    const pid = server.child.pid as number;
    const rssBefore = await settledRss(pid);
    const baselineMs = await bystanderLatency(bystander);
    const leave = new AbortController();
    const cell = "import sys\nwhile True:\n    sys.stdout.write('A' * 65536)\n";
    const answer = fetch(`${attacker.baseUrl}/sandboxes/${attacker.sandbox}/code`, {
      method: "POST",
      headers: { authorization: `Bearer ${attacker.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ code: cell }),
      signal: leave.signal,
    }).catch(() => undefined);
    const peak = watchRss(pid);
    await sleep(attackMs / 2);
    const attackMs50 = await bystanderLatency(bystander);
    await sleep(attackMs / 2);
    const rssDuring = peak.stop();
    leave.abort();
    await answer;
    console.log(
      `/code: RSS ${rssBefore} MiB before, peak ${rssDuring} MiB during; bystander p50 ${baselineMs} ms before, ${attackMs50} ms during`,
    );
    expect(rssDuring - rssBefore).toBeLessThan(maxGrowthMiB);
    expect(attackMs50).toBeLessThanOrEqual(2 * baselineMs + latencyFloorMs);
    // The client gone, the cell is interrupted: its interpreter stops writing.
    await expect
      .poll(async () => (await interpreterCpu(attacker)).ticksPerSecond, { timeout: 20_000, interval: 1000 })
      .toBeLessThan(20);
    expect((await settledRss(pid)) - rssBefore).toBeLessThan(maxGrowthMiB);
  });
});

interface User {
  baseUrl: string;
  apiKey: string;
  sandbox: string;
}

/** An account with a running sandbox of its own. */
async function user(baseUrl: string, name: string): Promise<User> {
  const email = `${name}@example.com`;
  await Paddock.signup(email, "correct horse battery", { baseUrl });
  const apiKey = (await Paddock.login(email, "correct horse battery", { baseUrl })).session.token;
  const account = { baseUrl, apiKey, sandbox: "" };
  const created = await api(account, "/sandboxes", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ template: "python", timeout: 900 }),
  });
  expect(created.status).toBe(201);
  account.sandbox = ((await created.json()) as { id: string }).id;
  return account;
}

function api(account: User, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${account.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${account.apiKey}`, ...(init.headers as Record<string, string>) },
  });
}

/** The median time of 15 reads of the account's own sandbox, in ms. */
async function bystanderLatency(account: User): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const started = performance.now();
    const response = await api(account, `/sandboxes/${account.sandbox}`);
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[7] as number);
}

/** A process's resident memory, in MiB. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(match?.[1]) / 1024);
}

/** Resident memory once the garbage the server made has had time to go. */
async function settledRss(pid: number): Promise<number> {
  await sleep(3000);
  return rssMiB(pid);
}

/** Samples a process's resident memory every 250 ms; `stop()` answers the highest. */
function watchRss(pid: number): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid));
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMiB(pid));
    },
  };
}

/**
 * A streaming POST read `unread` (never: the client's socket fills and stays full) or `slow` (one
 * byte a second). `started` resolves with the response's head.
 */
function openStream(
  account: User,
  path: string,
  body: unknown,
  reading: "unread" | "slow",
): { started: Promise<IncomingMessage>; close(): void } {
  const url = new URL(`/sandboxes/${account.sandbox}/${path}`, account.baseUrl);
  let request: ClientRequest;
  let timer: NodeJS.Timeout | undefined;
  const started = new Promise<IncomingMessage>((resolve, reject) => {
    request = httpRequest(
      url,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`answered ${response.statusCode}`));
        if (reading === "slow") timer = setInterval(() => response.read(1), 1000);
        resolve(response);
      },
    );
    request.on("error", () => {});
    request.end(JSON.stringify(body));
  });
  return {
    started,
    close() {
      clearInterval(timer);
      request.destroy();
    },
  };
}

/**
 * The processes in the attacker's sandbox whose name is one of `names`, and the CPU time they
 * used per second over 3 s (in clock ticks, 100 a second): near 0 while they wait on full pipes.
 */
async function cpuOf(account: User, names: string): Promise<{ count: number; ticksPerSecond: number }> {
  const sample = async () => {
    const script = `n=0; t=0; for p in /proc/[0-9]*; do read -r c < $p/comm 2>/dev/null || continue; case $c in ${names}) read -r -a f < $p/stat; n=$((n+1)); t=$((t+f[13]+f[14]));; esac; done; echo $n $t`;
    const response = await api(account, `/sandboxes/${account.sandbox}/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ command: script }),
    });
    const { stdout } = (await response.json()) as { stdout: string };
    const [count, ticks] = stdout.trim().split(" ").map(Number);
    return { count: count ?? Number.NaN, ticks: ticks ?? Number.NaN };
  };
  const first = await sample();
  await sleep(3000);
  const second = await sample();
  return { count: second.count, ticksPerSecond: Math.max(0, second.ticks - first.ticks) / 3 };
}

const producerCpu = (account: User) => cpuOf(account, "head|tr");
const interpreterCpu = (account: User) => cpuOf(account, "python*");
