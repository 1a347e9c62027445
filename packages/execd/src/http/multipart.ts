import type { IncomingMessage } from "node:http";
import { Errors, PaddockError } from "@paddock/common/errors";

export interface Part {
  name: string;
  filename?: string;
  /** Streams the part's bytes to `sink`, honouring its backpressure. */
  headers: Record<string, string>;
}

/**
 * A streaming multipart/form-data reader: calls `onPart` for each part with a function that
 * delivers its body chunk by chunk. Only one boundary-sized tail is ever held in memory beyond
 * the chunk being processed, so a 1 GiB file passes through with bounded memory.
 */
export async function readMultipart(
  req: IncomingMessage,
  onPart: (part: Part) => { write: (chunk: Buffer) => Promise<void>; end: () => Promise<void> },
): Promise<void> {
  const type = req.headers["content-type"] ?? "";
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(type);
  if (!type.startsWith("multipart/form-data") || !match)
    throw new PaddockError(Errors.invalidRequest, "expected multipart/form-data with a boundary");
  const boundary = Buffer.from(`\r\n--${match[1] ?? match[2]}`);
  // Prepend CRLF so the first boundary looks like every other one.
  let buffer: Buffer = Buffer.from("\r\n");
  let state: "preamble" | "headers" | "body" | "done" = "preamble";
  let sink: ReturnType<typeof onPart> | undefined;

  const process = async (final: boolean) => {
    for (;;) {
      if (state === "preamble") {
        const at = buffer.indexOf(boundary);
        if (at < 0) {
          buffer = buffer.subarray(Math.max(0, buffer.length - boundary.length));
          return;
        }
        buffer = buffer.subarray(at + boundary.length);
        state = "headers";
      } else if (state === "headers") {
        if (buffer.length >= 2 && buffer.subarray(0, 2).toString() === "--") {
          state = "done";
          return;
        }
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) {
          if (buffer.length > 16 * 1024)
            throw new PaddockError(Errors.invalidRequest, "multipart part headers are too large");
          return;
        }
        const headers: Record<string, string> = {};
        for (const line of buffer.subarray(0, end).toString("utf8").split("\r\n")) {
          const colon = line.indexOf(":");
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const disposition = headers["content-disposition"] ?? "";
        const name = /name="([^"]*)"/.exec(disposition)?.[1] ?? "";
        const filename = /filename="([^"]*)"/.exec(disposition)?.[1];
        sink = onPart({ name, ...(filename !== undefined ? { filename } : {}), headers });
        buffer = buffer.subarray(end + 4);
        state = "body";
      } else if (state === "body") {
        const at = buffer.indexOf(boundary);
        if (at < 0) {
          // Everything but a possible partial boundary at the end can go out now.
          const safe = final ? buffer.length : Math.max(0, buffer.length - boundary.length);
          if (safe > 0) await sink?.write(buffer.subarray(0, safe));
          buffer = buffer.subarray(safe);
          return;
        }
        if (at > 0) await sink?.write(buffer.subarray(0, at));
        await sink?.end();
        sink = undefined;
        buffer = buffer.subarray(at + boundary.length);
        state = "headers";
      } else {
        return;
      }
    }
  };

  // A part refused half-way leaves the request as it is (not destroyed), so the server can read
  // the rest of it away and keep the connection for the client's next request.
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    buffer = buffer.length ? Buffer.concat([buffer, chunk as Buffer]) : (chunk as Buffer);
    await process(false);
  }
  await process(true);
  if ((state as string) !== "done")
    throw new PaddockError(Errors.invalidRequest, "the multipart body ended before its closing boundary");
}
