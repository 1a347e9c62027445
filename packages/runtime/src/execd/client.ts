import { Agent, type ClientRequestArgs, request as httpRequest, type IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  Errors,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
  isPaddockError,
  PaddockError,
  type SseEvent,
  SseParser,
} from "@paddock/common";
import type { SandboxOperations } from "../sandbox-operations.js";
import { execdRefusal } from "./errors.js";
import type { components, paths } from "./execd-api.gen.js";
import {
  type CommandEvent,
  defaultCodeContext,
  type E2bProtocol,
  type ExecdActivity,
  type ExtensionPaths,
  e2bProtocolPrefixes,
  outputFramingHeader,
  type RunCodeRequest,
  type TerminalEvent,
  type TerminalStart,
} from "./extensions.js";
import { readJsonLimited } from "./limited-read.js";

type Schemas = components["schemas"];
export type FileInfo = Schemas["FileInfo"];
export type ExecdMetrics = Schemas["Metrics"];
export type CodeContext = Schemas["CodeContext"] & { id: string };
export type RunCommandRequest = Schemas["RunCommandRequest"];
export type StreamEvent = SseEvent & Schemas["ServerStreamEvent"];

/** Every path execd serves: the published definition's and Paddock's extensions. */
type ExecdPaths = paths & ExtensionPaths;
type Method = "get" | "post" | "delete";
/** Each operation of `ExecdPaths` as `METHOD path`: the only routes the client can call. */
export type ExecdRoute = {
  [P in keyof ExecdPaths & string]: {
    [M in Method]: ExecdPaths[P] extends Record<M, object> ? `${Uppercase<M>} ${P}` : never;
  }[Method];
}[keyof ExecdPaths & string];
type OperationOf<R extends ExecdRoute> = R extends `${infer M} ${infer P extends keyof ExecdPaths}`
  ? ExecdPaths[P][Lowercase<M> & keyof ExecdPaths[P]]
  : never;
type QueryOf<R extends ExecdRoute> = OperationOf<R> extends { parameters: { query: infer Q } } ? Q : never;
type PathParamsOf<R extends ExecdRoute> =
  OperationOf<R> extends { parameters: { path: infer P } } ? P : never;
type JsonBodyOf<R extends ExecdRoute> =
  OperationOf<R> extends {
    requestBody?: { content: { "application/json": infer B } };
  }
    ? B
    : never;
type JsonAnswerOf<R extends ExecdRoute> =
  OperationOf<R> extends {
    responses: { 200: { content: { "application/json": infer A } } };
  }
    ? A
    : never;

/** One call: the path's parameters, the query, and a JSON body or raw bytes. */
interface Call<R extends ExecdRoute> {
  params?: PathParamsOf<R>;
  query?: QueryOf<R>;
  json?: JsonBodyOf<R>;
  bytes?: Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Where the E2B gateway forwards a protocol's bytes unchanged: execd's address, headers, prefix. */
export interface ExecdForwarding {
  host: string;
  port: number;
  /** Set on what is forwarded: execd's token. */
  headers: Record<string, string>;
  /** Put before E2B's own path: where execd serves that protocol. */
  pathPrefix: string;
}

/**
 * Connections to execds kept open between calls: a command's round trip does not pay for a
 * TCP handshake, and node:http costs less per call than fetch on this, the hottest path.
 * Connections are pooled per sandbox, not per address: Docker hands a deleted sandbox's address
 * to the next one, and a connection to the old one must never be offered to the new. Idle ones
 * close after 4 s, long before execd's server would (60 s).
 */
class PerSandboxAgent extends Agent {
  override getName(options?: ClientRequestArgs & { sandboxId?: string }): string {
    return `${super.getName(options)}:${options?.sandboxId ?? ""}`;
  }
}
const keepAlive = new PerSandboxAgent({ keepAlive: true, maxFreeSockets: 4, timeout: 4000 });

/**
 * The longest event read from execd, in characters. Its events carry at most a pipe's read of
 * output (64 KiB) or a 1 MiB line, JSON-escaped (up to 6 characters a byte), or a code cell's
 * result (an image).
 */
const maxEventLength = 32 * 2 ** 20;

/** `route`'s path with its parameters filled in and `query` appended (a list repeats its name). */
function pathOf(route: ExecdRoute, params?: unknown, query?: unknown): string {
  const template = route.slice(route.indexOf(" ") + 1);
  const values = (params ?? {}) as Record<string, string>;
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(values[name])));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    for (const item of [value as unknown].flat()) if (item !== undefined) search.append(name, String(item));
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * One sandbox's execd, typed from its published wire definition (execd-api.yaml) and Paddock's
 * extensions (extensions.ts): the only code outside execd that knows its paths. execd's
 * refusals come back as registry errors; when it stops answering, the sandbox's own end (an
 * OOM kill, say) is the error when that is why.
 */
export class ExecdClient {
  private constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly sandboxId: string,
    private readonly sandboxes: SandboxOperations,
  ) {}

  /** The execd of sandbox `id`; with `owner`, only when it is theirs (`target` is the gate). */
  static async of(sandboxes: SandboxOperations, id: string, owner?: string | null): Promise<ExecdClient> {
    const { host, port } = await sandboxes.target(id, EXECD_PORT, owner);
    return new ExecdClient(`http://${host}:${port}`, sandboxes.tokens(id).execd, id, sandboxes);
  }

  /**
   * The execd of sandbox `id` at `address`, reached without going through `target`: for the
   * server's own questions, which must neither wake a paused sandbox nor count as its use.
   */
  static at(sandboxes: SandboxOperations, id: string, address: string): ExecdClient {
    return new ExecdClient(`http://${address}:${EXECD_PORT}`, sandboxes.tokens(id).execd, id, sandboxes);
  }

  /** Where E2B's `protocol` is forwarded to in sandbox `id`, for a caller who showed its token. */
  static async forwarding(
    sandboxes: SandboxOperations,
    id: string,
    protocol: E2bProtocol,
  ): Promise<ExecdForwarding> {
    const { host, port } = await sandboxes.target(id, EXECD_PORT);
    return {
      host,
      port,
      headers: { [EXECD_TOKEN_HEADER.toLowerCase()]: sandboxes.tokens(id).execd },
      pathPrefix: e2bProtocolPrefixes[protocol],
    };
  }

  /**
   * How to ask whether the execd at `address` is up (a container starting, a record being
   * recovered, before `target` answers): `GET /ping`, with the token when it is known.
   */
  static ping(address: string, token?: string): { url: string; headers: Record<string, string> } {
    return {
      url: `http://${address}:${EXECD_PORT}${pathOf("GET /ping")}`,
      headers: token === undefined ? {} : ExecdClient.accessHeaders(token),
    };
  }

  /** The header a caller who talks to execd directly sends with its token (OpenSandbox's endpoints). */
  static accessHeaders(token: string): Record<string, string> {
    return { [EXECD_TOKEN_HEADER]: token };
  }

  // Commands and code.

  /** Runs a command; its events end with `execution_complete` or `error` (after `init` when in the background). */
  runCommand(body: RunCommandRequest, signal?: AbortSignal): AsyncGenerator<SseEvent & CommandEvent> {
    return this.events("POST /command", body, signal);
  }

  async createCodeContext(language: string): Promise<CodeContext> {
    const context = await this.json("POST /code/context", { json: { language } }, "the context");
    // execd always names the context it made (the yaml's id is optional for `/code`'s use).
    return context as CodeContext;
  }

  /**
   * Runs a code cell in context `id`, or without one in the sandbox's default context of
   * `language` (kept by execd, so state carries from run to run). A client that stops reading
   * (or aborts) interrupts it.
   */
  runCode(
    code: string,
    context: { id: string } | { language: string },
    signal?: AbortSignal,
  ): AsyncGenerator<StreamEvent> {
    const named = "id" in context ? context : { id: defaultCodeContext, language: context.language };
    const body: RunCodeRequest = { context: named, code };
    return this.events("POST /code", body, signal);
  }

  // Files.

  fileInfo(path: string) {
    return this.json("GET /files/info", { query: { path: [path] } }, "the file's information");
  }

  /** A file's bytes (a byte range with `range`), streamed: 200 or 206 with execd's headers. */
  download(path: string, range?: string): Promise<Response> {
    return this.call("GET /files/download", { query: { path }, ...(range ? { headers: { range } } : {}) });
  }

  /**
   * Writes `content` to `target.path` through execd's multipart upload, sent while it is produced
   * and never held whole. A source that throws (an upload past its limit) ends the body before
   * its multipart end, so execd drops the partial file and leaves the target as it was.
   */
  async upload(
    target: Schemas["FileMetadata"] & { path: string },
    content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<void> {
    const boundary = `paddock${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(target)}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n\r\n`;
    const body = (async function* () {
      yield Buffer.from(head);
      yield* content;
      yield Buffer.from(`\r\n--${boundary}--\r\n`);
    })();
    await this.acknowledged(
      this.send(
        pathOf("POST /files/upload"),
        { "content-type": `multipart/form-data; boundary=${boundary}` },
        body,
      ),
    );
  }

  async move(from: string, to: string): Promise<void> {
    await this.acknowledged(this.call("POST /files/mv", { json: [{ src: from, dest: to }] }));
  }

  search(path: string, pattern?: string) {
    const query = { path, ...(pattern ? { pattern } : {}) };
    return this.json("GET /files/search", { query }, "the search's result");
  }

  listDirectory(path: string, depth: number) {
    return this.json("GET /directories/list", { query: { path, depth } }, "the listing");
  }

  async removeFile(path: string): Promise<void> {
    await this.acknowledged(this.call("DELETE /files", { query: { path: [path] } }));
  }

  /** Removes a directory and everything in it. */
  async removeDirectory(path: string): Promise<void> {
    await this.acknowledged(this.call("DELETE /directories", { query: { path: [path] } }));
  }

  /** Makes a directory and its missing parents. */
  async makeDirectory(path: string, mode: number): Promise<void> {
    await this.acknowledged(this.call("POST /directories", { json: { [path]: { mode } } }));
  }

  // Metrics.

  metrics() {
    return this.json("GET /metrics", {}, "the metrics");
  }

  /** A `metrics` event a second, read only as fast as it is consumed (execd skips samples meanwhile). */
  watchMetrics(signal?: AbortSignal): AsyncGenerator<SseEvent & Partial<ExecdMetrics>> {
    return this.events("GET /metrics/watch", undefined, signal);
  }

  /** envd's metrics (bytes, the root disk), as E2B's `getMetrics` reports them. */
  envdMetrics(signal?: AbortSignal) {
    return this.json("GET /e2b/envd/metrics", signal ? { signal } : {}, "the metrics");
  }

  // Activity.

  /** How many things execd started are running, and how many requests to it are open right now. */
  activity(signal?: AbortSignal): Promise<ExecdActivity> {
    return this.json("GET /activity", signal ? { signal } : {}, "the activity");
  }

  // Terminals.

  /** Starts a terminal; its stream names it (`init`), carries its output and ends with its `exit`. */
  startTerminal(start: TerminalStart, signal?: AbortSignal): AsyncGenerator<SseEvent & TerminalEvent> {
    return this.events("POST /pty", start, signal);
  }

  async terminalInput(id: string, bytes: Uint8Array): Promise<void> {
    await this.acknowledged(this.call("POST /pty/{id}/input", { params: { id }, bytes }));
  }

  async resizeTerminal(id: string, size: { rows: number; cols: number }): Promise<void> {
    await this.acknowledged(this.call("POST /pty/{id}/resize", { params: { id }, json: size }));
  }

  // The environment.

  /** Sets environment variables for every process execd starts from now on. */
  async setEnvironment(values: Record<string, string>, signal?: AbortSignal): Promise<void> {
    await this.acknowledged(this.call("POST /paddock/env", { json: values, ...(signal ? { signal } : {}) }));
  }

  // The wire.

  /** One request over fetch, refused as a registry error unless execd answers 2xx. */
  private async call<R extends ExecdRoute>(route: R, call: Call<R>): Promise<Response> {
    const headers: Record<string, string> = { [EXECD_TOKEN_HEADER]: this.token, ...call.headers };
    if (call.json !== undefined) headers["content-type"] = "application/json";
    const body = call.json !== undefined ? JSON.stringify(call.json) : call.bytes;
    const response = await fetch(`${this.base}${pathOf(route, call.params, call.query)}`, {
      method: route.slice(0, route.indexOf(" ")),
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
    }).catch(async (error: Error) => {
      throw await this.failure(
        new PaddockError(Errors.endpointUnavailable, `the sandbox's execd did not answer: ${error.message}`),
      );
    });
    if (!response.ok) throw await execdRefusal(response);
    return response;
  }

  /** A call's JSON answer, read within `maxExecdJson` (`what` names it in the refusal). */
  private async json<R extends ExecdRoute>(route: R, call: Call<R>, what: string): Promise<JsonAnswerOf<R>> {
    return readJsonLimited<JsonAnswerOf<R>>(await this.call(route, call), what);
  }

  /**
   * Waits for an answer whose body says nothing (`{}`) and reads it to its end, so its kept-alive
   * connection is free for the next call; a body longer than an acknowledgement is cut off.
   */
  private async acknowledged(answer: Promise<Response>): Promise<void> {
    let size = 0;
    for await (const chunk of (await answer).body ?? []) {
      size += chunk.length;
      if (size > 64 * 1024) break;
    }
  }

  /**
   * POSTs a body produced while it is sent, over node:http: fetch keeps every chunk of a streamed
   * request body until the request ends, so an upload would sit whole in the server's memory.
   * The source is paused while the socket is full. Answers with execd's response as fetch would.
   */
  private send(
    path: string,
    headers: Record<string, string>,
    body: AsyncIterable<Uint8Array>,
  ): Promise<Response> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(this.requestOptions(path, headers), (response) => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          for (const item of [value ?? []].flat()) answer.append(name, item);
        const fetched = new Response(Readable.toWeb(response) as ReadableStream, {
          status: response.statusCode ?? 502,
          headers: answer,
        });
        resolve(fetched.ok ? fetched : execdRefusal(fetched).then((error) => Promise.reject(error)));
      });
      // execd answering before it read everything (a refusal) wins over the broken pipe; the
      // source's own refusal (an upload past the limit) is the caller's answer as it stands.
      pipeline(Readable.from(body), request).catch(async (error: Error) =>
        reject(
          isPaddockError(error)
            ? error
            : await this.failure(
                new PaddockError(
                  Errors.endpointUnavailable,
                  `the sandbox's execd did not answer: ${error.message}`,
                ),
              ),
        ),
      );
    });
  }

  /** execd stopped answering: the sandbox's own end (an OOM kill, say) when that is why, else `error`. */
  private async failure(error: PaddockError): Promise<PaddockError> {
    return (await this.sandboxes.exitCause(this.sandboxId).catch(() => undefined)) ?? error;
  }

  /**
   * Streams the SSE events of a POST to execd (a GET when `body` is undefined), ending with its
   * terminal event. Output comes in the chunks the command wrote (not line by line, execd's
   * default), so `/run`'s joined stdout is exactly the command's bytes.
   */
  private async *events<E>(
    route: ExecdRoute,
    body: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<SseEvent & E> {
    let response: IncomingMessage;
    try {
      response = await this.open(
        pathOf(route),
        body === undefined ? undefined : JSON.stringify(body),
        signal,
      );
    } catch (error) {
      throw signal?.aborted ? error : await this.failure(error as PaddockError);
    }
    try {
      if (response.statusCode !== 200) {
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        throw await execdRefusal(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 502 }));
      }
      const parser = new SseParser();
      response.setEncoding("utf8");
      for await (const text of response) {
        yield* parser.push(text as string) as Array<SseEvent & E>;
        // execd runs in the sandbox: an event without end must not grow the server.
        if (parser.pendingLength > maxEventLength)
          throw new PaddockError(Errors.endpointUnavailable, "the sandbox's execd sent an event without end");
      }
      yield* parser.end() as Array<SseEvent & E>;
    } catch (error) {
      if (isPaddockError(error) || signal?.aborted) throw error;
      // The stream broke off mid-command.
      throw await this.failure(
        new PaddockError(
          Errors.endpointUnavailable,
          `the sandbox's execd stopped answering: ${(error as Error).message}`,
        ),
      );
    } finally {
      // A consumer that stops early (or an abort) must not leave the command's stream open.
      if (!response.complete) response.destroy();
    }
  }

  /** A request to this sandbox's execd on its own pool of kept-alive connections. */
  private requestOptions(
    path: string,
    headers: Record<string, string>,
    method = "POST",
  ): ClientRequestArgs & { sandboxId: string } {
    const url = new URL(path, this.base);
    return {
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method,
      agent: keepAlive,
      sandboxId: this.sandboxId,
      headers: { [EXECD_TOKEN_HEADER]: this.token, ...headers },
    };
  }

  /**
   * A JSON POST (a GET without `body`) over a kept-alive connection; resolves with the response
   * once its head arrives. A kept-alive connection found closed before anything came back (execd
   * restarted, say) is tried once more on a new one: execd never read the request on it, so
   * nothing runs twice.
   */
  private open(
    path: string,
    body: string | undefined,
    signal?: AbortSignal,
    retried = false,
  ): Promise<IncomingMessage> {
    const headers: Record<string, string> =
      body === undefined
        ? {}
        : {
            [outputFramingHeader]: "chunks",
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
          };
    const options = {
      ...this.requestOptions(path, headers, body === undefined ? "GET" : "POST"),
      ...(signal ? { signal } : {}),
    };
    return new Promise((resolve, reject) => {
      const request = httpRequest(options, resolve);
      request.on("error", (error: NodeJS.ErrnoException) => {
        const stale = request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE");
        if (stale && !retried && !signal?.aborted) {
          resolve(this.open(path, body, signal, true));
          return;
        }
        reject(
          new PaddockError(
            Errors.endpointUnavailable,
            `the sandbox's execd did not answer: ${error.message}`,
          ),
        );
      });
      request.end(body);
    });
  }
}
