/**
 * The resource attacks from inside a sandbox (DESIGN.md, Trust boundaries: one account cannot
 * slow another's requests), run by resources.slow.test.ts under gVisor and runc, and in part by
 * resources.test.ts. Each runs in a sandbox of the attacking account through `attack`
 * (test/support/resource-attacks.ts), which times the other account's reads throughout, samples
 * the server's memory, and then deletes the sandbox and looks for anything it left.
 * The streams that carry a sandbox's output are attacked here on the paths that
 * test/control-plane/backpressure*.test.ts do not cover: `/run` answered whole, execd's command
 * stream through the `/v1` proxy, an E2B process stream without a terminal, and diagnostics.
 */

import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { E2B_ENVD_PORT, EXECD_PORT } from "@paddock/common";
import { envdAccessToken } from "@paddock/e2b";
import { expect } from "vitest";
import { httpRequest, type StuckReader, stuckReader } from "../support/raw-http.js";
import { type AttackServer, runIn } from "../support/resource-attacks.js";

const MiB = 2 ** 20;
/** How long the stuck readers of an output flood stay stuck. */
const floodMs = 15_000;
const twoGigabytes = "head -c 2000000000 /dev/zero | tr '\\0' A";

/** Processes on the host now (a runc sandbox's are among them; a gVisor sandbox's are not). */
function hostProcesses(): number {
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length;
}

/** The most host processes seen, over the count before, while `during` runs. */
async function hostProcessGrowth(during: () => Promise<unknown>): Promise<number> {
  const before = hostProcesses();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, hostProcesses());
  }, 250);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return peak - before;
}

/** A Connect envelope of one JSON message, as E2B's SDKs frame a server-streaming call. */
function connectEnvelope(message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** Opens the readers, keeps them stuck for `floodMs`, then lets them go; their status lines. */
async function stuckFor(open: () => Promise<StuckReader>[]): Promise<string[]> {
  const readers = await Promise.all(open());
  try {
    await sleep(floodMs);
  } finally {
    for (const reader of readers) reader.leave();
  }
  return readers.map((reader) => reader.status);
}

/** Three clients of the stream that read nothing and one that reads a byte a second, each answered 200. */
async function threeUnreadOneSlow(server: AttackServer, request: Buffer): Promise<string> {
  const statuses = await stuckFor(() =>
    [false, false, false, true].map((slowly) => stuckReader(server.t.url, request, slowly)),
  );
  expect(statuses).toEqual(Array(4).fill("HTTP/1.1 200 OK"));
  return "yes: 3 unread + 1 slow";
}

export interface ResourceAttack {
  /** The test's title. */
  title: string;
  /** Its row in the table of figures. */
  label: string;
  timeoutMs: number;
  /** A longer bound on its DELETE than the suite's, where the engine's remove can get stuck. */
  deleteBoundMs?: number;
  /** Runs the attack in sandbox `id` and checks that it was stopped; says how. */
  contain(server: AttackServer, id: string): Promise<string>;
}

const pidsLimit = 512;

export const resourceAttacks: ResourceAttack[] = [
  {
    title: "a fork bomb in bash is held by the pids limit",
    label: "fork bomb (bash)",
    timeoutMs: 120_000,
    async contain(server, id) {
      let answer: Awaited<ReturnType<typeof runIn>> | undefined;
      const growth = await hostProcessGrowth(async () => {
        answer = await runIn(server, id, ":(){ :|:& };:", 15_000);
      });
      // The command is cut off at its timeout; no more host processes than the pids limit allows
      // (plus other work on the machine).
      expect(answer?.status).toBe(200);
      expect(growth).toBeLessThan(pidsLimit + 200);
      return `yes: +${growth} host processes`;
    },
  },
  {
    title: "a python os.fork loop is held by the pids limit or the memory limit",
    label: "fork bomb (python)",
    timeoutMs: 120_000,
    async contain(server, id) {
      const loop = "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n";
      let answer: Awaited<ReturnType<typeof runIn>> | undefined;
      const growth = await hostProcessGrowth(async () => {
        answer = await runIn(server, id, `python3 -c '${loop}'`, 15_000);
      });
      expect(growth).toBeLessThan(pidsLimit + 200);
      // Each child copies some of the interpreter's memory: the memory limit may come first, and
      // under gVisor it takes the whole sandbox (decision 0002).
      const how = answer?.status === 409 ? answer.body.code : `exit ${answer?.body.exitCode}`;
      expect([200, 409]).toContain(answer?.status);
      if (answer?.status === 409) expect(answer.body.code).toBe("sandbox_oom_killed");
      return `yes: +${growth} host processes, ${how}`;
    },
  },
  {
    title: "a memory bomb is killed at the memory limit",
    label: "memory bomb",
    timeoutMs: 120_000,
    async contain(server, id) {
      const answer = await runIn(server, id, `python3 -c "x = bytearray(2 * 1024**3)"`);
      if (server.runtime === "gvisor") {
        // gVisor's Sentry holds the sandbox's memory: the kernel kills the sandbox.
        expect([answer.status, answer.body.code]).toEqual([409, "sandbox_oom_killed"]);
        return "yes: sandbox OOM-killed";
      }
      expect([answer.status, answer.body.exitCode, answer.body.oomKilled]).toEqual([200, 137, true]);
      const after = await runIn(server, id, "echo alive");
      expect(after.body.stdout).toBe("alive\n");
      return "yes: process OOM-killed, sandbox lives";
    },
  },
  {
    title: "filling the disk, /dev/shm and /tmp stops at their bounds",
    label: "disk fill",
    timeoutMs: 240_000,
    async contain(server, id) {
      const fill = [
        "dd if=/dev/zero of=/root/fill bs=1M count=1024 2>&1 | grep -o 'No space left on device'; echo dd=${PIPESTATUS[0]}",
        "fallocate -l 1G /root/fallocated 2>&1; echo fallocate=$?",
        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=256 2>&1 | grep -o 'No space left on device'; echo shm=${PIPESTATUS[0]}",
      ].join("; ");
      const answer = await runIn(server, id, fill, 120_000);
      expect(answer.status).toBe(200);
      const output = answer.body.stdout as string;
      expect(output).toMatch(/dd=1\n/);
      expect(output).toMatch(/fallocate=1\n/);
      expect(output).toMatch(/shm=1\n/);
      expect(output.match(/No space left on device/g)?.length).toBeGreaterThanOrEqual(3);
      // The host gave the sandbox its quota's image and no more.
      const image = join(resolve(server.t.config.server.data_dir), "disks", `${id}.ext4`);
      const allocated = statSync(image).blocks * 512;
      expect(allocated).toBeLessThan(256 * MiB + 16 * MiB);
      // /tmp: on the quota's disk under runc; runsc's own tmpfs (memory) under gVisor, where
      // the memory limit takes the sandbox (decision 0120).
      const tmp = await runIn(
        server,
        id,
        "rm -f /root/fill /root/fallocated; dd if=/dev/zero of=/tmp/fill bs=1M count=1024 2>&1 | grep -o 'No space left on device'; echo tmp=${PIPESTATUS[0]}",
      );
      if (server.runtime === "gvisor")
        expect([tmp.status, tmp.body.code]).toEqual([409, "sandbox_oom_killed"]);
      else expect(tmp.body.stdout).toMatch(/No space left on device\ntmp=1\n/);
      return `yes: ENOSPC on /, fallocate, /dev/shm; /tmp ${server.runtime === "gvisor" ? "OOM-kill" : "ENOSPC"}; image ${Math.round(allocated / MiB)} MiB`;
    },
  },
  {
    title: "a million empty files stop at the disk's inodes and the sandbox still deletes",
    label: "1e6 files",
    timeoutMs: 900_000,
    async contain(server, id) {
      const script = [
        "import os",
        "os.makedirs('/root/many', exist_ok=True)",
        "n = 0",
        "try:",
        "    while n < 10**6:",
        "        open(f'/root/many/{n}', 'w').close()",
        "        n += 1",
        "    print('created', n)",
        "except OSError as error:",
        "    print('stopped', n, error.errno)",
      ].join("\n");
      const answer = await runIn(server, id, `python3 -c "${script}"`, 600_000);
      expect(answer.status).toBe(200);
      const [, count, errno] = /stopped (\d+) (\d+)/.exec(answer.body.stdout) ?? [];
      expect(Number(errno)).toBe(28); // ENOSPC: no inode left
      expect(Number(count)).toBeLessThan(10 ** 6);
      return `yes: ENOSPC after ${count} files`;
    },
  },
  {
    title: "open-file and socket exhaustion stops at the sandbox's own limit; execd answers",
    label: "fd/socket exhaustion",
    timeoutMs: 400_000,
    // A stuck gVisor sandbox: the engine's remove is given 15 s, then its runsc processes are
    // killed and the remove is awaited again (decision 0200).
    deleteBoundMs: 60_000,
    async contain(server, id) {
      const raise = await runIn(server, id, "ulimit -n 1048576 && echo raised; ulimit -Hn");
      expect(raise.body.stdout).not.toContain("raised");
      const limit = Number(raise.body.stdout.trim());
      const holder = [
        "import os, socket, sys, time",
        "kind, out = sys.argv[1], sys.argv[2]",
        "held = []",
        "try:",
        "    while True: held.append(socket.socket() if kind == 'socket' else os.open('/dev/null', os.O_RDONLY))",
        "except OSError as error:",
        "    reached = len(held)",
        "    last = held.pop()  # one descriptor free, to write the result with",
        "    last.close() if kind == 'socket' else os.close(last)",
        "    open(out, 'w').write(f'{reached} {error.errno}')",
        "time.sleep(600)",
      ].join("\n");
      const write = await runIn(server, id, `cat > /tmp/holder.py <<'EOF'\n${holder}\nEOF`);
      expect(write.status).toBe(200);
      // One holder of files and two of sockets, all kept open.
      const start = async (kinds: string[], from: number) => {
        for (const [n, kind] of kinds.entries())
          expect(await fetchRun(server, id, `python3 /tmp/holder.py ${kind} /tmp/held-${from + n}`)).toBe(
            200,
          );
      };
      const results = async () => {
        const answer = await runIn(
          server,
          id,
          'for f in /tmp/held-*; do cat "$f"; echo; done 2>/dev/null; true',
        );
        if (answer.status !== 200) return answer.body.code as string;
        const numbers = (answer.body.stdout as string).trim().split(/\s+/).filter(Boolean).map(Number);
        return numbers.flatMap((count, i) => (i % 2 === 0 ? [[count, numbers[i + 1]]] : []));
      };
      await start(["file", "socket", "socket"], 0);
      await expect.poll(async () => (await results()).length, { timeout: 120_000, interval: 1000 }).toBe(3);
      const held = (await results()) as number[][];
      for (const [count, errno] of held) {
        expect(count).toBeLessThanOrEqual(limit);
        expect(errno).toBe(24); // EMFILE
      }
      // While they hold what they took, execd still runs the owner's commands.
      const alive = await runIn(server, id, "echo alive");
      expect(alive.body.stdout).toBe("alive\n");
      const heldFigures = `EMFILE at ${held[0]?.[0]} files, ${held[1]?.[0]} sockets (limit ${limit}, not raisable)`;
      // More processes, each up to its own limit: the sockets' kernel memory is the sandbox's
      // (charged to its memory limit), so under runc they end in EMFILE each or in the sandbox's
      // OOM kill. Under gVisor they can stop the sandbox for good (its Sentry answers nothing and
      // `runsc kill` waits on it): the delete that follows must still end it (decision 0200).
      // Started by one command: one by one, a later start could meet the sandbox OOM-killed.
      expect(
        await fetchRun(
          server,
          id,
          "for n in $(seq 3 10); do python3 /tmp/holder.py socket /tmp/held-$n & done; wait",
        ),
      ).toBe(200);
      // A sandbox that no longer runs commands answers late, with an error, or without the
      // first holders' results it showed a moment ago.
      const stuck = "stopped running commands";
      const outcome = async () => {
        const now = await Promise.race([results(), sleep(30_000).then(() => stuck)]);
        if (now === "sandbox_oom_killed") return now;
        if (typeof now === "string" || now.length < 3) return stuck;
        return now.length === 11 ? "EMFILE each" : undefined;
      };
      let after: string | undefined;
      for (const until = performance.now() + 150_000; !after && performance.now() < until; await sleep(2000))
        after = await outcome();
      // Under gVisor the holders may also still be taking sockets slowly; the delete must end
      // the sandbox in every case.
      if (server.runtime !== "gvisor") expect(after).toMatch(/^(sandbox_oom_killed|EMFILE each)$/);
      return `yes: ${heldFigures}; 8 more holders: ${after ?? "still taking sockets after 150 s"}`;
    },
  },
  {
    title: "processes that ignore SIGTERM do not hold up the delete",
    label: "SIGTERM ignored",
    timeoutMs: 120_000,
    async contain(server, id) {
      for (const command of [
        // Marked sleeps: the sandbox's own main process is a `sleep infinity`.
        "trap '' TERM; sleep 100001",
        `python3 -c "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(100002)"`,
        "setsid nohup bash -c \"trap '' TERM HUP INT; while :; do sleep 100003; done\" >/dev/null 2>&1 &",
      ])
        expect(await fetchRun(server, id, command)).toBe(200);
      const survivors = await runIn(
        server,
        id,
        "sleep 1; pids=$(pgrep -f '[s]leep 10000[13]|[t]ime.sleep.100002'); kill -TERM $pids; sleep 1; for pid in $pids; do [ -d /proc/$pid ] && echo alive; done",
      );
      // Each of them outlived its SIGTERM.
      expect(survivors.status).toBe(200);
      expect((survivors.body.stdout as string).split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(3);
      return "yes: delete does not wait on SIGTERM";
    },
  },
  {
    title: "/run answered whole: the output is cut at 8 MiB and paced",
    label: "flood: /run (buffered)",
    timeoutMs: 120_000,
    async contain(server, id) {
      const answers = await Promise.all(
        [1, 2].map(async () => {
          const response = await fetch(`${server.t.url}/sandboxes/${id}/run`, {
            method: "POST",
            headers: { authorization: `Bearer ${server.attacker}`, "content-type": "application/json" },
            body: JSON.stringify({ command: twoGigabytes, timeoutMs: floodMs }),
          });
          const text = await response.text();
          // Its size and flag only: parsing it would add to the memory measured here.
          return {
            status: response.status,
            size: text.length,
            truncated: text.includes('"truncated":true'),
          };
        }),
      );
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 200, truncated: true });
        expect(answer.size).toBeLessThan(8 * MiB + 4096);
      }
      return "yes: 2 x 8 MiB, truncated";
    },
  },
  {
    title: "execd's command stream through the /v1 proxy",
    label: "flood: /v1 execd SSE",
    timeoutMs: 120_000,
    async contain(server, id) {
      const endpoint = (await (
        await server.t.api(`/v1/sandboxes/${id}/endpoints/${EXECD_PORT}?use_server_proxy=true`)
      ).json()) as { headers: Record<string, string> };
      const headers = {
        ...endpoint.headers,
        "runtime-api-key": server.t.apiKey,
        "content-type": "application/json",
      };
      const request = httpRequest(
        "POST",
        `/v1/sandboxes/${id}/proxy/${EXECD_PORT}/command`,
        headers,
        JSON.stringify({ command: twoGigabytes }),
      );
      return threeUnreadOneSlow(server, request);
    },
  },
  {
    title: "an E2B process stream without a terminal",
    label: "flood: E2B process",
    timeoutMs: 120_000,
    async contain(server, id) {
      const body = connectEnvelope({ process: { cmd: "/bin/bash", args: ["-c", twoGigabytes] } });
      const request = httpRequest(
        "POST",
        "/e2b/process.Process/Start",
        {
          "e2b-sandbox-id": id,
          "e2b-sandbox-port": String(E2B_ENVD_PORT),
          "x-access-token": envdAccessToken(server.t.config.server.secret_key, id),
          authorization: `Basic ${Buffer.from("root:").toString("base64")}`,
          "content-type": "application/connect+json",
          "connect-protocol-version": "1",
        },
        body,
      );
      return threeUnreadOneSlow(server, request);
    },
  },
  {
    title: "diagnostics of a sandbox that flooded its own log",
    label: "flood: diagnostics logs",
    timeoutMs: 180_000,
    async contain(server, id) {
      // PID 1's output is the container's log (bounded by the engine's rotation: 2 x 5 MB).
      const flood = await runIn(
        server,
        id,
        "head -c 40000000 /dev/zero | tr '\\0' A | fold -w 4000 > /proc/1/fd/1; echo $?",
        120_000,
      );
      expect(flood.body.stdout).toBe("0\n");
      const request = httpRequest("GET", `/sandboxes/${id}/diagnostics/logs?scope=container`, {
        authorization: `Bearer ${server.attacker}`,
      });
      const statuses = await stuckFor(() =>
        Array.from({ length: 8 }, (_, n) => stuckReader(server.t.url, request, n === 0)),
      );
      expect(statuses).toEqual(Array(8).fill("HTTP/1.1 200 OK"));
      return "yes: 8 readers of ~8 MiB each";
    },
  },
];

/** Starts a command in the background (`POST /run` with `background`); its status. */
async function fetchRun(server: AttackServer, id: string, command: string): Promise<number> {
  const response = await fetch(`${server.t.url}/sandboxes/${id}/run`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.attacker}`, "content-type": "application/json" },
    body: JSON.stringify({ command, background: true }),
  });
  await response.arrayBuffer();
  return response.status;
}
