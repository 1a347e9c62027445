import { request as httpRequest } from "node:http";
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
    const request = httpRequest(url, { method, headers }, (response) => {
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
