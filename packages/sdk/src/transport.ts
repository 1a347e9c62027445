// Bundled into the package's one file (scripts/bundle.mjs): the SDK installs with no dependencies.
import { SseParser } from "@paddock/common/sse";
import { errorFor, PaddockError, TimeoutError } from "./errors.js";
import { isStreamedBody, sendStreamed } from "./streamed-upload.js";

export const defaultBaseUrl = "http://127.0.0.1:8080";
export const defaultRequestTimeoutMs = 60_000;

export interface ConnectionOptions {
  /** Defaults to PADDOCK_API_KEY. An API key or a session token. */
  apiKey?: string;
  /** Defaults to PADDOCK_BASE_URL, then http://127.0.0.1:8080. */
  baseUrl?: string;
  /** How long to wait for each answer to start (a stream may then run on); defaults to 60 s. */
  requestTimeoutMs?: number;
}

/** One server-sent event of a streaming call: its `type` and the fields that event carries. */
export interface ServerEvent {
  type: string;
  [field: string]: unknown;
}

export interface RequestOptions {
  requestTimeoutMs?: number;
  signal?: AbortSignal;
}

/** One HTTP client for every part of the SDK: auth header, timeouts, errors mapped to classes. */
export class Transport {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: ConnectionOptions = {}) {
    this.baseUrl = (options.baseUrl ?? process.env.PADDOCK_BASE_URL ?? defaultBaseUrl).replace(/\/$/, "");
    this.apiKey = options.apiKey ?? process.env.PADDOCK_API_KEY;
    this.timeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs;
  }

  withKey(apiKey: string): Transport {
    return new Transport({ apiKey, baseUrl: this.baseUrl, requestTimeoutMs: this.timeoutMs });
  }

  async fetch(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions & { raw?: boolean; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    // The timeout covers waiting for the answer, not reading it: a streamed command or file
    // takes as long as it takes once it has started.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), options.requestTimeoutMs ?? this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
    const json = body !== undefined && !options.raw;
    const url = `${this.baseUrl}${path}`;
    const headers = {
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
      ...(json ? { "content-type": "application/json" } : {}),
      ...options.headers,
    };
    let response: Response;
    try {
      response =
        options.raw && isStreamedBody(body)
          ? await sendStreamed(url, method, headers, body, signal)
          : await fetch(url, {
              method,
              signal,
              headers,
              ...(body === undefined
                ? {}
                : { body: json ? JSON.stringify(body) : (body as RequestInit["body"]) }),
            });
    } catch (error) {
      if (timeout.signal.aborted)
        throw new TimeoutError(`${method} ${path} took longer than the request timeout`, "timeout", 0, true);
      throw new PaddockError(
        `${method} ${path} failed: ${(error as Error).message}`,
        "connection_failed",
        0,
        true,
      );
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      const answer = (await response.json().catch(() => ({}))) as { code?: string; detail?: string };
      throw errorFor(
        response.status,
        answer.code ?? "unknown_error",
        answer.detail ?? `${method} ${path} answered ${response.status}`,
      );
    }
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const response = await this.fetch(method, path, body, options);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** POSTs (GETs without a body) and yields the server's SSE events until the stream ends (no reconnects). */
  async *events(
    path: string,
    body: unknown,
    options: RequestOptions & { headers?: Record<string, string> } = {},
  ): AsyncGenerator<ServerEvent> {
    const response = await this.fetch(body === undefined ? "GET" : "POST", path, body, options);
    const parser = new SseParser();
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      yield* parser.push(decoder.decode(chunk, { stream: true }));
    }
    yield* parser.end();
  }
}
