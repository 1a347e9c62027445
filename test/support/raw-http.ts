import { request as nodeRequest } from "node:http";
import { connect, type Socket } from "node:net";
import WebSocket from "ws";

/**
 * One request with any method (fetch refuses TRACE, which `all` routes register), its answer's
 * body read for at most `readMs`: a stream that stays open is cut there rather than hanging.
 */
export function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
  readMs = 2000,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = nodeRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      const done = () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
        response.destroy();
      };
      const timer = setTimeout(done, readMs);
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", done);
      response.on("error", done);
    });
    request.setTimeout(30_000, () => request.destroy(new Error(`${method} ${url}: no answer in 30 s`)));
    request.on("error", reject);
    request.end(body);
  });
}

/** The status a WebSocket upgrade is answered with; 101 when it connected (then closed). */
export function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: 20_000 });
    socket.on("open", () => {
      socket.terminate();
      resolve(101);
    });
    socket.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on("error", (error) => reject(error));
  });
}

/**
 * Opens a long-lived response (an SSE stream) with a bearer credential. `by(ms)` tells whether
 * the server has ended it ("ended") or it is still open after waiting that long ("open").
 */
export async function openEventStream(url: string, credential: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${credential}` } });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const closed = (async () => {
    try {
      for await (const _chunk of response.body as ReadableStream<Uint8Array>);
    } catch {}
    return "ended" as const;
  })();
  return {
    by: (withinMs: number) =>
      Promise.race([
        closed,
        new Promise<"open">((resolve) => setTimeout(() => resolve("open"), withinMs).unref()),
      ]),
    close: () => response.body?.cancel().catch(() => undefined),
  };
}

/** A client of one stream that reads its status line and then nothing (`slow`: a byte a second). */
export interface StuckReader {
  status: string;
  leave(): void;
}

/** Sends a raw HTTP request and reads the answer's status line, then stops reading. */
export async function stuckReader(
  base: string,
  request: string | Buffer,
  slow: boolean,
): Promise<StuckReader> {
  const url = new URL(base);
  const socket: Socket = connect(Number(url.port), url.hostname);
  socket.on("error", () => {});
  socket.pause();
  socket.write(request);
  const status = await new Promise<string>((resolveLine, reject) => {
    let line = "";
    const timer = setTimeout(() => done(new Error(`no status line after ${JSON.stringify(line)}`)), 60_000);
    const done = (error?: Error) => {
      clearTimeout(timer);
      socket.off("readable", take);
      socket.off("close", closed);
      if (error) reject(error);
      else resolveLine(line.trim());
    };
    const take = () => {
      for (let byte = socket.read(1) as Buffer | null; byte; byte = socket.read(1) as Buffer | null) {
        line += byte.toString("latin1");
        if (line.endsWith("\r\n")) return done();
      }
    };
    const closed = () => done(new Error(`closed after ${JSON.stringify(line)}`));
    socket.on("readable", take);
    socket.on("close", closed);
    take();
  });
  const timer = slow ? setInterval(() => socket.read(1), 1000) : undefined;
  return {
    status,
    leave() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** An HTTP/1.1 request as bytes on the wire. */
export function httpRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | string,
): Buffer {
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  const lines = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1", "connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${payload.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), payload]);
}
