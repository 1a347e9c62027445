import { PaddockError } from "./errors.js";
import type { RequestOptions, Transport } from "./transport.js";
import type { FileInfo } from "./types.js";
import { encodePart, queryOf } from "./url.js";

/** What `files.write` takes; everything but text and bytes is read as it is sent. */
export type WriteData = string | Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** `sandbox.files`: the sandbox's filesystem. */
export class Files {
  constructor(
    private readonly transport: Transport,
    private readonly sandboxId: string,
  ) {}

  private path(suffix: string): string {
    return `/sandboxes/${encodePart(this.sandboxId)}${suffix}`;
  }

  /**
   * Text by default; `{ format: "bytes" }` for binary content; `{ format: "stream" }` for the
   * bytes as they arrive, never the whole file in memory (the request timeout covers the wait
   * for the first byte, not the transfer).
   */
  async read(path: string, options?: { format?: "text" } & RequestOptions): Promise<string>;
  async read(path: string, options: { format: "bytes" } & RequestOptions): Promise<Uint8Array>;
  async read(
    path: string,
    options: { format: "stream" } & RequestOptions,
  ): Promise<ReadableStream<Uint8Array>>;
  async read(
    path: string,
    options: { format?: "text" | "bytes" | "stream" } & RequestOptions = {},
  ): Promise<string | Uint8Array | ReadableStream<Uint8Array>> {
    const response = await this.transport.fetch(
      "GET",
      this.path(`/files/download${queryOf({ path })}`),
      undefined,
      options,
    );
    // A 200 answer to a GET always has a body.
    if (options.format === "stream")
      return brokenOffAsPaddockError(response.body as ReadableStream<Uint8Array>, path);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return options.format === "bytes" ? bytes : new TextDecoder().decode(bytes);
  }

  /**
   * Writes a file, streaming the content to the sandbox as it is produced: text, bytes, a Blob,
   * a ReadableStream or any async iterable of bytes (a Node stream, a generator). The request
   * timeout covers the whole transfer.
   */
  async write(
    path: string,
    data: WriteData,
    options: { mode?: number } & RequestOptions = {},
  ): Promise<{ path: string; size: number }> {
    const body = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const query = queryOf({ path, mode: options.mode });
    const response = await this.transport.fetch("POST", this.path(`/files/upload${query}`), body, {
      ...options,
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    return (await response.json()) as { path: string; size: number };
  }

  async list(path: string, options: { depth?: number } & RequestOptions = {}): Promise<FileInfo[]> {
    const query = queryOf({ path, depth: options.depth ?? 1 });
    return (
      await this.transport.json<{ items: FileInfo[] }>(
        "GET",
        this.path(`/files/list${query}`),
        undefined,
        options,
      )
    ).items;
  }

  async search(path: string, pattern: string, options: RequestOptions = {}): Promise<FileInfo[]> {
    return (
      await this.transport.json<{ items: FileInfo[] }>(
        "POST",
        this.path("/files/search"),
        { path, pattern },
        options,
      )
    ).items;
  }

  async move(from: string, to: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.fetch("POST", this.path("/files/move"), { from, to }, options);
  }

  /** Removes a file, or a directory with everything in it when `recursive`. */
  async remove(path: string, options: { recursive?: boolean } & RequestOptions = {}): Promise<void> {
    const query = queryOf({ path, recursive: options.recursive ?? false });
    await this.transport.fetch("DELETE", this.path(`/files${query}`), undefined, options);
  }

  async makeDir(path: string, options: { mode?: number } & RequestOptions = {}): Promise<void> {
    await this.transport.fetch(
      "POST",
      this.path("/directories"),
      { path, ...(options.mode !== undefined ? { mode: options.mode } : {}) },
      options,
    );
  }
}

/** The same bytes; a transfer that breaks off (the sandbox died, the connection dropped) fails with a PaddockError. */
function brokenOffAsPaddockError(body: ReadableStream<Uint8Array>, path: string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(
          new PaddockError(
            `reading ${path} broke off: ${(error as Error).message}`,
            "connection_failed",
            0,
            true,
          ),
        );
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
