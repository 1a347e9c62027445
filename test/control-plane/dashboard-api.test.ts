import { request as httpRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type SseEvent, SseParser } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callApi } from "../support/user.js";

// What the web dashboard reads, against live servers with real gVisor sandboxes: the change
// stream, metrics, diagnostics, the template filter, usage per day, and the upload limit.

interface EventReader {
  status: number;
  events: SseEvent[];
  /** Raw text received, comments included. */
  text: string;
  /** Resolves once the server ends the stream. */
  ended: Promise<void>;
  /** The first event (counting from `from`) that `match` accepts, within `timeoutMs`. */
  next(match: (event: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

/** Reads a server-sent event stream as it comes. */
async function readEvents(url: string, headers: Record<string, string>): Promise<EventReader> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const reader: EventReader = {
    status: response.status,
    events,
    text: "",
    ended: Promise.resolve(),
    async next(match, timeoutMs = 30_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(events)}`);
        await sleep(25);
      }
    },
    close: () => abort.abort(),
  };
  if (!response.ok || !response.body) {
    reader.text = await response.text();
    return reader;
  }
  const body = response.body.pipeThrough(new TextDecoderStream());
  const parser = new SseParser();
  reader.ended = (async () => {
    try {
      for await (const chunk of body) {
        reader.text += chunk;
        events.push(...parser.push(chunk));
      }
    } catch {
      // closed by us
    }
  })();
  return reader;
}

/** POSTs `size` bytes of `fill` as application/octet-stream, with a Content-Length or chunked. */
function upload(
  url: string,
  token: string,
  size: number,
  options: { chunked: boolean; fill?: string },
): Promise<{ status: number; body: { code?: string; detail?: string; size?: number } }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        ...(options.chunked ? {} : { "content-length": String(size) }),
      },
    });
    request.on("response", async (response) => {
      answered = true;
      let text = "";
      for await (const chunk of response) text += chunk;
      resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
    });
    // A server that answers early and closes may cut the body off: only a missing answer fails.
    request.on("error", (error) => {
      if (!answered) setTimeout(() => !answered && reject(error), 1000);
    });
    const chunk = Buffer.alloc(64 * 1024, options.fill ?? "x");
    const drained = () =>
      new Promise<void>((resume) => {
        const done = () => {
          request.off("drain", done).off("close", done);
          resume();
        };
        request.on("drain", done).on("close", done);
      });
    (async () => {
      for (let sent = 0; sent < size && !answered && !request.destroyed; sent += chunk.length) {
        if (!request.write(chunk.subarray(0, Math.min(chunk.length, size - sent)))) await drained();
      }
      if (!request.destroyed) request.end();
    })().catch(() => undefined);
  });
}

describe("the dashboard's API", () => {
  let t: TestServer;
  let alice: string;
  let bob: string;
  let bobKey: string;
  const streams: EventReader[] = [];
  let bobStream: EventReader;

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callApi(t, token, method, path, body);
  const create = async (metadata: Record<string, string> = {}) => {
    const created = await call(alice, "POST", "/sandboxes", { template: "python", metadata });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const events = (token: string, how: "bearer" | "cookie" = "bearer") =>
    readEvents(
      `${t.url}/sandboxes/events`,
      how === "bearer" ? { authorization: `Bearer ${token}` } : { cookie: `paddock_session=${token}` },
    );

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.account("alice-dashboard@example.com");
    bob = await t.account("bob-dashboard@example.com");
    // A key scoped to sandboxes may watch them too.
    bobKey = (await call(bob, "POST", "/keys", { name: "watcher", scope: "sandboxes" })).body.secret;
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await t?.dispose();
  });

  test("the change stream: a create reaching Running, a metadata patch, a pause and a delete, to the owner only", async () => {
    const byBearer = await events(alice);
    const byCookie = await events(alice, "cookie");
    bobStream = await events(bobKey);
    streams.push(byBearer, byCookie, bobStream);
    expect([byBearer.status, byCookie.status, bobStream.status]).toEqual([200, 200, 200]);
    const refused = await events("not-a-token");
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toMatchObject({ code: "unauthorized" });

    const id = await create({ stage: "one" });
    const sandboxEvent = (match: (sandbox: Record<string, unknown>) => boolean) => (event: SseEvent) =>
      event.type === "sandbox" &&
      (event.sandbox as { id: string }).id === id &&
      match(event.sandbox as Record<string, unknown>);
    for (const stream of [byBearer, byCookie]) {
      const running = await stream.next(sandboxEvent((sandbox) => sandbox.state === "Running"));
      // The same wire object GET /sandboxes/{id} answers.
      expect(running.sandbox).toEqual((await call(alice, "GET", `/sandboxes/${id}`)).body);
      expect(running.sandbox).toMatchObject({ template: "python", metadata: { stage: "one" } });
    }

    expect((await call(alice, "PATCH", `/sandboxes/${id}/metadata`, { stage: "two" })).status).toBe(200);
    for (const stream of [byBearer, byCookie])
      await stream.next(sandboxEvent((sandbox) => (sandbox.metadata as { stage: string }).stage === "two"));

    expect((await call(alice, "POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    // (Pausing may be read as Paused already: each event carries the record as it is when sent.)
    for (const stream of [byBearer, byCookie])
      await stream.next(sandboxEvent((sandbox) => sandbox.state === "Paused"));

    expect((await call(alice, "DELETE", `/sandboxes/${id}`)).status).toBe(204);
    for (const stream of [byBearer, byCookie])
      await stream.next((event) => event.type === "deleted" && event.id === id);
    // Every event is one of the three shapes, encoded as `event: <type>`.
    for (const event of byBearer.events) expect(["sandbox", "deleted", "resync"]).toContain(event.type);
    expect(byBearer.text).toContain(`event: deleted\ndata: {"type":"deleted","id":"${id}"}\n\n`);
  });

  describe("with running sandboxes", () => {
    let first: string;
    let second: string;

    beforeAll(async () => {
      [first, second] = await Promise.all([create({ role: "first" }), create({ role: "second" })]);
    });

    test("the list filters by template, with state and pages", async () => {
      const python = await call(alice, "GET", "/sandboxes?template=python");
      expect(python.body.items.map((item: { id: string }) => item.id).sort()).toEqual([first, second].sort());
      expect((await call(alice, "GET", "/sandboxes?template=node")).body).toMatchObject({
        items: [],
        pagination: { totalItems: 0 },
      });
      expect((await call(alice, "GET", "/sandboxes?template=python&state=Paused")).body.items).toEqual([]);
      const pages = await Promise.all(
        [1, 2].map((page) => call(alice, "GET", `/sandboxes?template=python&pageSize=1&page=${page}`)),
      );
      expect(pages.map((page) => page.body.pagination.totalItems)).toEqual([2, 2]);
      expect(pages[0]?.body.pagination.hasNextPage).toBe(true);
      expect(
        new Set(pages.flatMap((page) => page.body.items.map((item: { id: string }) => item.id))),
      ).toEqual(new Set([first, second]));
      expect((await call(bob, "GET", "/sandboxes?template=python")).body.items).toEqual([]);
      expect((await call(alice, "GET", `/sandboxes?template=${"x".repeat(65)}`)).status).toBe(400);
    });

    test("diagnostics: logs and events as text, a bad scope refused, another account's id not found", async () => {
      const logs = await call(alice, "GET", `/sandboxes/${first}/diagnostics/logs`);
      expect(logs.status).toBe(200);
      expect(logs.body).toEqual({ text: expect.stringContaining("Running"), truncated: false });
      const lifecycle = await call(alice, "GET", `/sandboxes/${first}/diagnostics/events?scope=lifecycle`);
      expect(lifecycle.body.text).toMatch(/Pending creating from/);
      const runtime = await call(alice, "GET", `/sandboxes/${first}/diagnostics/events?scope=runtime`);
      expect(runtime.body.text).toContain("runtime container running");
      const bad = await call(alice, "GET", `/sandboxes/${first}/diagnostics/logs?scope=runtime`);
      expect(bad).toMatchObject({ status: 400, body: { code: "invalid_request" } });
      expect(bad.body.detail).toContain("container, lifecycle, all");
      for (const kind of ["logs", "events"]) {
        expect(await call(bob, "GET", `/sandboxes/${first}/diagnostics/${kind}`)).toMatchObject({
          status: 404,
          body: { code: "sandbox_not_found" },
        });
      }
    });

    test("usage per day: every day of the month so far, adding up to the minutes used", async () => {
      await sleep(1500); // both sandboxes have run a while
      const usage = (await call(alice, "GET", "/usage")).body as {
        usedMinutes: number;
        days: Array<{ date: string; minutes: number }>;
      };
      const today = new Date().toISOString().slice(0, 10);
      expect(usage.days.map((day) => day.date)).toEqual(
        Array.from(
          { length: Number(today.slice(8)) },
          (_, i) => `${today.slice(0, 8)}${String(i + 1).padStart(2, "0")}`,
        ),
      );
      expect(usage.usedMinutes).toBeGreaterThan(0);
      const total = usage.days.reduce((sum, day) => sum + day.minutes, 0);
      expect(Math.abs(total - usage.usedMinutes)).toBeLessThan(0.01);
      expect(usage.days.at(-1)?.minutes).toBeGreaterThan(0);
    });

    test("metrics: one sample, a watch a second, and the watch's last event once the sandbox is deleted", async () => {
      const sane = (sample: Record<string, unknown>) => {
        expect(sample.cpu_count).toBeGreaterThan(0);
        expect(sample.cpu_used_pct).toBeGreaterThanOrEqual(0);
        expect(sample.cpu_used_pct).toBeLessThanOrEqual(100);
        expect(sample.mem_total_mib).toBeGreaterThan(0);
        expect(sample.mem_used_mib).toBeGreaterThan(0);
        expect(sample.mem_used_mib).toBeLessThanOrEqual(sample.mem_total_mib as number);
        expect(Math.abs(Date.now() - (sample.timestamp as number))).toBeLessThan(60_000);
      };
      const one = await call(alice, "GET", `/sandboxes/${second}/metrics`);
      expect(one.status).toBe(200);
      expect(Object.keys(one.body).sort()).toEqual([
        "cpu_count",
        "cpu_used_pct",
        "mem_total_mib",
        "mem_used_mib",
        "timestamp",
      ]);
      sane(one.body);
      expect(one.body.cpu_count).toBe(1); // the default limit, not the CPUs gVisor shows
      expect(await call(bob, "GET", `/sandboxes/${second}/metrics`)).toMatchObject({
        status: 404,
        body: { code: "sandbox_not_found" },
      });
      const refused = await readEvents(`${t.url}/sandboxes/${second}/metrics/watch`, {
        authorization: `Bearer ${bob}`,
      });
      expect(refused.status).toBe(404);

      const watch = await readEvents(`${t.url}/sandboxes/${second}/metrics/watch`, {
        authorization: `Bearer ${alice}`,
      });
      streams.push(watch);
      expect(watch.status).toBe(200);
      await watch.next((event) => event.type === "metrics", 10_000, 1); // a second sample
      for (const event of watch.events) sane(event);
      expect(watch.text).toMatch(/^event: metrics\ndata: \{"type":"metrics","cpu_count":/);

      expect((await call(alice, "DELETE", `/sandboxes/${second}`)).status).toBe(204);
      const deleted = Date.now();
      const last = await watch.next((event) => event.type === "error", 15_000);
      expect(last).toMatchObject({ type: "error", status: 404, code: "sandbox_not_found" });
      await watch.ended;
      expect(Date.now() - deleted).toBeLessThan(10_000);
      expect(watch.events.at(-1)).toEqual(last);
    });
  });

  test("another account's stream heard none of it", async () => {
    await sleep(200);
    expect(bobStream.events).toEqual([]);
  });
});

describe("the upload limit", () => {
  let t: TestServer;
  let token: string;
  let id: string;
  const limit = 1024 * 1024;
  const path = "/root/kept.txt";
  const content = async () => {
    const response = await fetch(`${t.url}/sandboxes/${id}/files/download?path=${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return response.text();
  };
  const listing = async () => {
    const response = await fetch(`${t.url}/sandboxes/${id}/files/list?path=/root`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return ((await response.json()) as { items: Array<{ path: string }> }).items.map((item) => item.path);
  };

  beforeAll(async () => {
    t = await startTestServer({ config: { server: { max_upload_bytes: limit } } });
    token = await t.account("uploads@example.com");
    const created = await fetch(`${t.url}/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ template: "python" }),
    });
    id = ((await created.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a body over the limit is refused (413) with or without a Content-Length, and the file stays as it was", async () => {
    const kept = await upload(`${t.url}/sandboxes/${id}/files/upload?path=${path}`, token, limit, {
      chunked: true,
      fill: "k",
    });
    expect(kept).toEqual({ status: 200, body: { path, size: limit } });
    const before = await listing();

    for (const route of ["files/upload", "files/write"]) {
      for (const chunked of [false, true]) {
        const refused = await upload(`${t.url}/sandboxes/${id}/${route}?path=${path}`, token, 3 * limit, {
          chunked,
          fill: "n",
        });
        expect(refused.status, `${route} chunked=${chunked}`).toBe(413);
        expect(refused.body.code).toBe("payload_too_large");
        expect(refused.body.detail).toContain("1048576 bytes");
        expect(refused.body.detail).toContain("[server] max_upload_bytes");
        // Nothing lost, nothing half-written beside it.
        expect(await content()).toBe("k".repeat(limit));
        await sleep(200);
        expect(await listing()).toEqual(before);
      }
    }
    // One byte over, chunked: refused as well.
    expect(
      (
        await upload(`${t.url}/sandboxes/${id}/files/upload?path=${path}`, token, limit + 1, {
          chunked: true,
        })
      ).status,
    ).toBe(413);
    expect(await content()).toBe("k".repeat(limit));
  });

  test("an upload its client abandons half-way leaves the file as it was", async () => {
    const before = await listing();
    for (const chunked of [false, true]) {
      const request = httpRequest(`${t.url}/sandboxes/${id}/files/upload?path=${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/octet-stream",
          ...(chunked ? {} : { "content-length": String(limit) }),
        },
      });
      request.on("error", () => undefined);
      request.write(Buffer.alloc(limit / 2, "h"));
      await sleep(300); // the half is on its way into the sandbox
      request.destroy();
      await sleep(500);
      expect(await content(), `chunked=${chunked}`).toBe("k".repeat(limit));
      expect(await listing()).toEqual(before);
    }
  });

  test("an open change stream ends when the server closes, without holding it up", async () => {
    const stream = await readEvents(`${t.url}/sandboxes/events`, { authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    const closing = t.server.app.close();
    const outcome = await Promise.race([stream.ended.then(() => "ended"), sleep(20_000).then(() => "open")]);
    expect(outcome).toBe("ended");
    await closing;
  });
});
