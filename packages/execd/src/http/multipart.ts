import type { IncomingMessage } from "node:http";
import { Errors, PaddockError } from "@paddock/common/errors";

export interface Part {
  name: string;
  filename?: string;
  headers: Record<string, string>;
}

/**
 * Where a part's body goes. `write` returns a promise only when the reader must wait before
 * the next bytes (the sink is full or not ready), so a body flows through without a turn of
 * the event loop per chunk.
 */
export interface PartSink {
  write(chunk: Buffer): Promise<void> | undefined;
  end(): Promise<void>;
}

/** Runs `next` at once, or after `wait` when there is one to wait for. */
function after(
  wait: Promise<void> | undefined,
  next: () => Promise<void> | undefined,
): Promise<void> | undefined {
  return wait ? wait.then(next) : next();
}

/**
 * A streaming multipart/form-data parser: `push` the body's bytes in any pieces, then `end`.
 * It calls `onPart` for each part and hands the part's body to the returned sink as
 * subarrays of the pushed chunks (no copy, but for a boundary split across two chunks), so
 * memory stays bounded whatever the size of a file. `push` and `end` return a promise when the
 * caller must wait for it before pushing more.
 */
export function multipartParser(boundaryText: string, onPart: (part: Part) => PartSink) {
  const boundary = Buffer.from(`\r\n--${boundaryText}`);
  // Prepend CRLF so the first boundary looks like every other one.
  let buffer: Buffer = Buffer.from("\r\n");
  let state: "preamble" | "headers" | "body" | "done" = "preamble";
  let sink: PartSink | undefined;

  const process = (final: boolean): Promise<void> | undefined => {
    for (;;) {
      if (state === "preamble") {
        const at = buffer.indexOf(boundary);
        if (at < 0) {
          buffer = buffer.subarray(Math.max(0, buffer.length - boundary.length));
          return undefined;
        }
        buffer = buffer.subarray(at + boundary.length);
        state = "headers";
      } else if (state === "headers") {
        if (buffer.length >= 2 && buffer[0] === 0x2d && buffer[1] === 0x2d) {
          state = "done";
          return undefined;
        }
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) {
          if (buffer.length > 16 * 1024)
            throw new PaddockError(Errors.invalidRequest, "multipart part headers are too large");
          return undefined;
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
          const safe = final ? buffer.length : Math.max(0, buffer.length - boundary.length + 1);
          const piece = buffer.subarray(0, safe);
          buffer = buffer.subarray(safe);
          return safe > 0 ? sink?.write(piece) : undefined;
        }
        const piece = buffer.subarray(0, at);
        const finished = sink;
        sink = undefined;
        buffer = buffer.subarray(at + boundary.length);
        state = "headers";
        const ending = after(at > 0 ? finished?.write(piece) : undefined, () => finished?.end());
        return Promise.resolve(ending).then(() => process(final));
      } else {
        return undefined;
      }
    }
  };

  return {
    push(chunk: Buffer): Promise<void> | undefined {
      if (buffer.length > 0 && state === "body" && chunk.length >= boundary.length) {
        // A boundary across the held tail and the chunk starts in the tail and ends in the
        // chunk's first bytes: only when one does is the chunk copied behind the tail.
        const seam = Buffer.concat([buffer, chunk.subarray(0, boundary.length - 1)]);
        if (seam.indexOf(boundary) < 0) {
          const tail = buffer;
          buffer = chunk;
          return after(sink?.write(tail), () => process(false));
        }
      }
      buffer = buffer.length > 0 ? Buffer.concat([buffer, chunk]) : chunk;
      return process(false);
    },
    async end(): Promise<void> {
      await process(true);
      if (state !== "done")
        throw new PaddockError(Errors.invalidRequest, "the multipart body ended before its closing boundary");
    },
  };
}

/**
 * Reads a multipart/form-data request body part by part (see `multipartParser`). The body is read
 * in flowing mode and paused only while a sink asks to wait. A part refused half-way leaves the
 * request as it is (not destroyed, its data listener gone), so the server can read the rest of it
 * away and keep the connection for the client's next request.
 */
export async function readMultipart(req: IncomingMessage, onPart: (part: Part) => PartSink): Promise<void> {
  const type = req.headers["content-type"] ?? "";
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(type);
  if (!type.startsWith("multipart/form-data") || !match)
    throw new PaddockError(Errors.invalidRequest, "expected multipart/form-data with a boundary");
  const parser = multipartParser(match[1] ?? (match[2] as string), onPart);
  return new Promise<void>((resolve, reject) => {
    /** The wait a sink asked for: no chunk is pushed, and the end not taken, before it is over. */
    let waiting: Promise<void> | undefined;
    let failed = false;
    const stop = () => {
      req.off("data", onData).off("end", onEnd).off("error", fail).off("close", onClose);
    };
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      stop();
      reject(error);
    };
    const hold = (wait: Promise<void>) => {
      waiting = wait;
      req.pause();
      wait.then(() => {
        if (waiting !== wait || failed) return;
        waiting = undefined;
        req.resume();
      }, fail);
    };
    const onData = (chunk: Buffer) => {
      // A paused request sends no data, but should one come, it waits its turn.
      if (waiting) return hold(waiting.then(() => parser.push(chunk)));
      try {
        const wait = parser.push(chunk);
        if (wait) hold(wait);
      } catch (error) {
        fail(error);
      }
    };
    const onEnd = () => {
      stop();
      Promise.resolve(waiting)
        .then(() => parser.end())
        .then(resolve, reject);
    };
    // Destroyed before its end (the client went away): no end will come.
    const onClose = () => fail(new PaddockError(Errors.invalidRequest, "the upload was cut off"));
    req.on("data", onData).on("end", onEnd).on("error", fail).on("close", onClose);
  });
}
