import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

export type StreamedBody = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

/** A body whose bytes are produced while it is sent (not text, bytes or a Blob). */
export function isStreamedBody(body: unknown): body is StreamedBody {
  return (
    body instanceof ReadableStream ||
    (typeof body === "object" && body !== null && Symbol.asyncIterator in body && !(body instanceof Blob))
  );
}

/**
 * Sends a streamed request body with node:http(s) and answers as fetch would. fetch (undici, Node
 * 20 and 22) keeps every chunk of a streamed request body until the request ends, so a 1 GiB
 * upload would sit whole in memory; node:http lets each chunk go once the socket has taken it, and
 * pauses the source while the socket is full.
 */
export function sendStreamed(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: StreamedBody,
  signal: AbortSignal,
): Promise<Response> {
  const send = url.startsWith("https:") ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, { method, headers, signal }, (response) => {
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        for (const item of [value ?? []].flat()) answerHeaders.append(name, item);
      }
      const status = response.statusCode ?? 502;
      const bytes = status === 204 || status === 304 ? null : (Readable.toWeb(response) as ReadableStream);
      resolve(new Response(bytes, { status, headers: answerHeaders }));
    });
    const source = body instanceof ReadableStream ? Readable.fromWeb(body as never) : Readable.from(body);
    // A server that answers before reading everything (a refusal) wins over the broken pipe.
    pipeline(source, request).catch(reject);
  });
}
