/**
 * Attack tests: every path that carries a sandbox's raw bytes to a client (file downloads, the
 * endpoint proxy, terminals) against clients that never read, or read one byte a second, a
 * 2 GiB stream. The rule (DESIGN.md, Trust boundaries): a slow or absent reader slows the
 * producer in the sandbox, it does not fill the server; memory per connection is bounded and
 * released when the client leaves; another account's requests stay fast.
 *
 * The server is a `paddock serve` child process, measured from outside (VmRSS in /proc): the
 * test's own clients and buffers do not count, and a server that runs out of heap fails the
 * test without taking the test runner down. Each path runs under gVisor and under runc.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { E2B_ENVD_PORT } from "@paddock/common";
import { createTestDatabase } from "@paddock/db";
import { envdAccessToken, trafficAccessToken } from "@paddock/e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { Paddock, Sandbox } from "../../packages/sdk/src/index.js";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../support/paddock-process.js";
import { httpRequest, type StuckReader, stuckReader } from "../support/raw-http.js";

const MiB = 2 ** 20;
/** How long each attack runs before it is measured and the clients leave. */
const attackMs = 15_000;
/**
 * How long the programs writing to terminals run: past the attack, and then they end, for E2B's
 * processes outlive their stream (a client may connect to them again) and, unwatched, their
 * output is dropped as fast as they write it.
 */
const producerSeconds = attackMs / 1000 + 5;
/** Growth of the server's RSS over its level before the attack that the attack may cause. */
const rssGrowthBound = 100 * MiB;
/**
 * Another account's `GET /sandboxes/{id}` p50 during the attack: at most twice its baseline,
 * plus 25 ms of slack on this shared two-core machine (the sandbox's producer, gVisor's Sentry
 * and the clients all run on the same cores as the server).
 */
const latencyFactor = 2;
const latencySlackMs = 25;
/**
 * Bytes a producer may get out per stuck client: what the sockets on the way hold (gVisor's
 * network stack and the host's, each direction's buffers autotuned to several MiB), the bounded
 * buffers of execd and the server, the pipe and the terminal. 15 MiB per client was the most
 * seen; without backpressure it is what the producer writes in 15 s, gigabytes.
 */
const producedPerClient = 32 * MiB;
/**
 * Terminal input the server may take from clients while the program does not read it: the
 * sockets' kernel buffers on the way, 1 MiB queued per WebSocket, the pipe and the terminal.
 */
const inputBound = 128 * MiB;

/**
 * A program for the sandbox: writes 64 KiB blocks to stdout, keeping the count in
 * /tmp/count-NAME, and stops writing after SECONDS (a program nobody reads from stops itself).
 */
const producer = `
import os, sys, time
name, seconds = sys.argv[1], float(sys.argv[2])
block = b"A" * 65536
total, last, end = 0, 0.0, time.monotonic() + seconds
def record():
    with open(f"/tmp/count-{name}.new", "w") as f: f.write(str(total))
    os.replace(f"/tmp/count-{name}.new", f"/tmp/count-{name}")
record()
while total < 2 << 30 and time.monotonic() < end:
    sys.stdout.buffer.write(block); sys.stdout.buffer.flush()
    total += len(block)
    if time.monotonic() - last > 0.2: record(); last = time.monotonic()
record()
`;

/**
 * An HTTP server for the sandbox on port 8000: a GET of /NAME streams 2 GiB, counted in
 * /tmp/count-NAME; a GET asking for an upgrade is switched and then streams the same raw.
 */
const streamingServer = `
import os, http.server
block = b"A" * 65536
class Stream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_GET(self):
        name = self.path.strip("/").split("/")[-1] or "root"
        if self.headers.get("upgrade"):
            self.send_response(101); self.send_header("Upgrade", self.headers["upgrade"])
            self.send_header("Connection", "Upgrade")
        else:
            self.send_response(200); self.send_header("Content-Length", str(2 << 30))
        self.end_headers()
        total = 0
        def record():
            with open(f"/tmp/count-{name}.new", "w") as f: f.write(str(total))
            os.replace(f"/tmp/count-{name}.new", f"/tmp/count-{name}")
        record()
        try:
            while total < 2 << 30:
                self.wfile.write(block); total += len(block)
                if total % (4 << 20) == 0: record()
        except OSError: pass
        record()
http.server.ThreadingHTTPServer(("0.0.0.0", 8000), Stream).serve_forever()
`;

/** The server's resident memory, from the kernel's view of the process. */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!kib) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** A WebSocket client whose socket is paused once open (`slow`: fed one byte a second). */
async function webSocketReader(url: string, headers: Record<string, string>, slow: boolean) {
  const socket = new WebSocket(url, { headers });
  socket.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`WebSocket upgrade refused: ${response.statusCode}`)),
    );
    socket.once("error", reject);
  });
  const raw = (socket as unknown as { _socket: Socket })._socket;
  raw.pause();
  const timer = slow ? setInterval(() => raw.read(1), 1000) : undefined;
  return {
    status: "HTTP/1.1 101 Switching Protocols",
    leave() {
      clearInterval(timer);
      raw.destroy();
    },
  };
}

/** A Connect envelope holding one JSON message, as E2B's SDKs frame a server-streaming call. */
function connectEnvelope(message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

const runtimes = [
  ["gVisor", []],
  ["runc", ["[secure_runtime]", 'type = ""']],
] as const;

describe.each(runtimes)("backpressure on byte streams under %s", (_runtime, configLines) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let running: PaddockProcess;
  let secretKey: string;
  let apiKey: string;
  let attacker: { token: string; sandbox: Sandbox };
  let victim: { token: string; sandboxId: string };

  const url = () => running.url;
  const pid = () => running.child.pid as number;

  async function account(name: string): Promise<string> {
    const email = `${name}@example.com`;
    await Paddock.signup(email, "correct horse battery", { baseUrl: url() });
    return (await Paddock.login(email, "correct horse battery", { baseUrl: url() })).session.token;
  }

  /** Milliseconds of one `GET /sandboxes/{id}` by the other account. */
  async function victimGet(): Promise<number> {
    const started = performance.now();
    const response = await fetch(`${url()}/sandboxes/${victim.sandboxId}`, {
      headers: { authorization: `Bearer ${victim.token}` },
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`the other account's GET answered ${response.status}`);
    return performance.now() - started;
  }

  /** Sum of the sandbox's /tmp/count-* files: bytes its producers got out. */
  async function produced(prefix: string): Promise<number> {
    const result = await attacker.sandbox.commands.run(
      `for f in /tmp/count-${prefix}*; do cat "$f" && echo; done`,
    );
    return result.stdout
      .split("\n")
      .filter(Boolean)
      .reduce((sum, line) => sum + Number(line), 0);
  }

  /**
   * Runs an attack: a baseline of the server's RSS and the other account's latency, then
   * `open` starts the readers, and for `attackMs` the RSS is sampled and the other account
   * keeps asking. Then the readers leave and the RSS is read again once it has settled.
   */
  async function attack(
    open: () => Promise<StuckReader[]>,
    whileStuck: () => Promise<unknown> = async () => {},
  ) {
    const baseline: number[] = [];
    for (let i = 0; i < 15; i++) baseline.push(await victimGet());
    const before = rssOf(pid());
    const readers = await open();
    const rss: number[] = [];
    const during: number[] = [];
    const until = Date.now() + attackMs;
    const sampler = setInterval(() => {
      try {
        rss.push(rssOf(pid()));
      } catch {
        rss.push(Number.POSITIVE_INFINITY); // the server is gone
      }
    }, 250);
    let failed: unknown;
    let stuck: unknown;
    try {
      while (Date.now() < until) {
        try {
          during.push(await victimGet());
        } catch (error) {
          failed = error;
          break;
        }
        await sleep(100);
      }
      stuck = await whileStuck();
    } finally {
      clearInterval(sampler);
      for (const reader of readers) reader.leave();
    }
    await sleep(5000);
    const after = rssOf(pid());
    const figures = {
      beforeMiB: Math.round(before / MiB),
      peakMiB: Math.round(Math.max(...rss) / MiB),
      afterMiB: Math.round(after / MiB),
      baselineP50Ms: Math.round(median(baseline)),
      duringP50Ms: Math.round(median(during)),
      // What `whileStuck` measured: bytes produced or taken, or reads open.
      stuck,
    };
    console.log(`${expect.getState().currentTestName}: ${JSON.stringify(figures)}`);
    return {
      statuses: readers.map((reader) => reader.status),
      before,
      peak: Math.max(...rss),
      after,
      baseline: median(baseline),
      during: median(during),
      failed,
      stuck,
    };
  }

  function expectHeld(result: Awaited<ReturnType<typeof attack>>) {
    expect(result.failed).toBeUndefined();
    expect(result.peak - result.before).toBeLessThan(rssGrowthBound);
    expect(result.after - result.before).toBeLessThan(rssGrowthBound);
    expect(result.during).toBeLessThan(result.baseline * latencyFactor + latencySlackMs);
  }

  beforeAll(async () => {
    database = await createTestDatabase("sqlite");
    dir = mkdtempSync(join(tmpdir(), "paddock-backpressure-"));
    const config = writeServerConfig(dir, database.url, [...configLines]);
    const text = readFileSync(config.file, "utf8");
    secretKey = /secret_key = "([^"]+)"/.exec(text)?.[1] as string;
    apiKey = /api_key = "([^"]+)"/.exec(text)?.[1] as string;
    running = await serve(config.file);
    const token = await account("attacker");
    const sandbox = await Sandbox.create({
      baseUrl: url(),
      apiKey: token,
      template: "python",
      timeoutSeconds: 900,
    });
    attacker = { token, sandbox };
    await sandbox.files.write("/tmp/produce.py", producer);
    await sandbox.files.write("/tmp/serve.py", streamingServer);
    await sandbox.commands.run("truncate -s 2G /tmp/big && truncate -s 256M /tmp/warm");
    await sandbox.commands.run("python3 /tmp/serve.py", { background: true });
    const victimToken = await account("victim");
    const other = await Sandbox.create({
      baseUrl: url(),
      apiKey: victimToken,
      template: "python",
      timeoutSeconds: 900,
    });
    victim = { token: victimToken, sandboxId: other.id };
    // The server streams a file once, read to the end, before any attack: what its first stream
    // costs it whatever happens (its heap and allocator grown to streaming size) is not counted
    // as the attack's.
    const warm = await fetch(`${url()}/sandboxes/${sandbox.id}/files/download?path=/tmp/warm`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect((await warm.arrayBuffer()).byteLength).toBe(256 * MiB);
  });
  afterAll(async () => {
    if (running) {
      for (const token of [attacker?.token, victim?.token].filter(Boolean)) {
        const { items } = await Sandbox.list({ baseUrl: url(), apiKey: token }).catch(() => ({ items: [] }));
        await Promise.allSettled(
          items.map((item) => Sandbox.kill(item.id, { baseUrl: url(), apiKey: token })),
        );
      }
    }
    await stop(running?.child, "SIGTERM");
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("file downloads: /files/read, /files/download and envd's GET /files of a 2 GiB file", async () => {
    const id = attacker.sandbox.id;
    const auth = { authorization: `Bearer ${attacker.token}` };
    const envd = {
      "e2b-sandbox-id": id,
      "e2b-sandbox-port": String(E2B_ENVD_PORT),
      "x-access-token": envdAccessToken(secretKey, id),
      authorization: `Basic ${Buffer.from("root:").toString("base64")}`,
    };
    const requests = [
      httpRequest(
        "POST",
        `/sandboxes/${id}/files/read`,
        { ...auth, accept: "application/octet-stream", "content-type": "application/json" },
        JSON.stringify({ path: "/tmp/big" }),
      ),
      httpRequest("GET", `/sandboxes/${id}/files/download?path=/tmp/big`, auth),
      httpRequest("GET", "/e2b/files?path=/tmp/big", envd),
    ];
    /** How many times the file is open in the sandbox: execd's reads of it. */
    const openReads = async () =>
      Number(
        (await attacker.sandbox.commands.run("ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c /tmp/big; true"))
          .stdout,
      );
    const result = await attack(
      () =>
        Promise.all(
          requests.flatMap((request) =>
            [false, false, true].map((slow) => stuckReader(url(), request, slow)),
          ),
        ),
      openReads,
    );
    expect(result.statuses).toEqual(Array(9).fill("HTTP/1.1 200 OK"));
    expectHeld(result);
    // Each download held its file open while stuck, and closed it when its client left.
    expect(result.stuck).toBe(9);
    await expect.poll(openReads, { timeout: 10_000, interval: 500 }).toBe(0);
  });

  test("the endpoint proxy: signed endpoint, runtime API proxy, E2B gateway, and an upgraded stream", async () => {
    const id = attacker.sandbox.id;
    const endpoint = (await (
      await fetch(`${url()}/sandboxes/${id}/endpoints/8000`, {
        headers: { authorization: `Bearer ${attacker.token}` },
      })
    ).json()) as { url: string };
    const signedPath = new URL(endpoint.url).pathname;
    const e2b = {
      "e2b-sandbox-id": id,
      "e2b-sandbox-port": "8000",
      "e2b-traffic-access-token": trafficAccessToken(secretKey, id),
    };
    const upgrade = { connection: "Upgrade", upgrade: "raw" };
    const requests = (n: number) => [
      httpRequest("GET", `${signedPath}proxy-signed-${n}`, {}),
      httpRequest("GET", `/v1/sandboxes/${id}/proxy/8000/proxy-v1-${n}`, { "runtime-api-key": apiKey }),
      httpRequest("GET", `/e2b/proxy-e2b-${n}`, e2b),
      httpRequest("GET", `${signedPath}proxy-upgrade-${n}`, upgrade),
    ];
    const result = await attack(
      () =>
        Promise.all(
          [false, false, true].flatMap((slow, n) =>
            requests(n).map((request) => stuckReader(url(), request, slow)),
          ),
        ),
      () => produced("proxy-"),
    );
    expect(result.statuses).toEqual(
      Array(3)
        .fill(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 101 Switching Protocols"])
        .flat(),
    );
    expectHeld(result);
    // The server in the sandbox was held back, not drained into the server's memory, and its
    // writes failed once the clients had left.
    expect(result.stuck).toBeLessThan(producedPerClient * result.statuses.length);
    const left = await produced("proxy-");
    await sleep(2000);
    expect(await produced("proxy-")).toBe(left);
  });

  test("terminals: the control plane's WebSocket and E2B's pty over Connect", async () => {
    const id = attacker.sandbox.id;
    const terminalUrl = (name: string) =>
      `${url().replace("http", "ws")}/sandboxes/${id}/terminal?command=${encodeURIComponent(`python3 /tmp/produce.py ${name} ${producerSeconds}`)}`;
    const start = (name: string) =>
      connectEnvelope({
        process: { cmd: "/bin/bash", args: ["-c", `python3 /tmp/produce.py ${name} ${producerSeconds}`] },
        pty: { size: { cols: 80, rows: 24 } },
      });
    const e2bPty = (name: string, slow: boolean): Promise<StuckReader> => {
      const body = start(name);
      const head = httpRequest("POST", "/e2b/process.Process/Start", {
        "e2b-sandbox-id": id,
        "e2b-sandbox-port": String(E2B_ENVD_PORT),
        "x-access-token": envdAccessToken(secretKey, id),
        authorization: `Basic ${Buffer.from("root:").toString("base64")}`,
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        "content-length": String(body.length),
      });
      return stuckReader(url(), Buffer.concat([Buffer.from(head), body]), slow);
    };
    const result = await attack(
      async () => {
        const readers: StuckReader[] = [];
        for (const [n, slow] of [false, false, true].entries()) {
          readers.push(
            await webSocketReader(
              terminalUrl(`term-ws-${n}`),
              { authorization: `Bearer ${attacker.token}` },
              slow,
            ),
          );
          readers.push(await e2bPty(`term-e2b-${n}`, slow));
        }
        return readers;
      },
      () => produced("term-"),
    );
    expect(result.statuses).toEqual(
      Array(3).fill(["HTTP/1.1 101 Switching Protocols", "HTTP/1.1 200 OK"]).flat(),
    );
    expectHeld(result);
    // The programs writing to the terminals were blocked; a WebSocket's terminal is hung up
    // when its client leaves.
    expect(result.stuck).toBeLessThan(producedPerClient * result.statuses.length);
    const left = await produced("term-ws-");
    await sleep(2000);
    expect(await produced("term-ws-")).toBe(left);
  });

  test("terminal input: clients that flood a terminal whose program never reads it", async () => {
    const id = attacker.sandbox.id;
    // Raw and without echo: the terminal itself neither discards input (as a full line does in
    // cooked mode) nor answers it, so what is not read backs up to the client.
    const command = encodeURIComponent("stty raw -echo; sleep 600");
    const terminalUrl = `${url().replace("http", "ws")}/sandboxes/${id}/terminal?command=${command}`;
    const message = Buffer.alloc(256 * 1024, "A");
    /** Sends as fast as the server takes it, keeping at most 4 MiB waiting on the client's side. */
    const flood = async () => {
      const socket = new WebSocket(terminalUrl, { headers: { authorization: `Bearer ${attacker.token}` } });
      socket.on("error", () => {});
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      let sent = 0;
      const timer = setInterval(() => {
        while (socket.readyState === WebSocket.OPEN && socket.bufferedAmount < 4 * MiB) {
          socket.send(message, { binary: true });
          sent += message.length;
        }
      }, 10);
      return {
        status: "HTTP/1.1 101 Switching Protocols",
        taken: () => sent - socket.bufferedAmount,
        leave() {
          clearInterval(timer);
          socket.terminate();
        },
      };
    };
    let flooders: Awaited<ReturnType<typeof flood>>[] = [];
    const result = await attack(
      async () => {
        flooders = await Promise.all([flood(), flood()]);
        return flooders;
      },
      async () => flooders.reduce((sum, flooder) => sum + flooder.taken(), 0),
    );
    expect(result.statuses).toEqual(Array(2).fill("HTTP/1.1 101 Switching Protocols"));
    expectHeld(result);
    // What the server took stopped at what the terminal, execd and the sockets between hold.
    expect(result.stuck).toBeLessThan(inputBound);
  });
});
