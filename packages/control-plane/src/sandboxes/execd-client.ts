import { Agent, type ClientRequestArgs, request as httpRequest, type IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type ErrorDefinition,
  Errors,
  EXECD_OUTPUT_FRAMING_HEADER,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
  ExecdErrors,
  isPaddockError,
  PaddockError,
  type SseEvent,
  SseParser,
} from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import type { FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "../http/auth-hook.js";
import { ControlPlaneErrors } from "../http/errors.js";

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

/** Talks to one sandbox's execd on behalf of its owner (the owner check happens in `target`). */
export class ExecdClient {
  private constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly sandboxId: string,
    private readonly sandboxes: SandboxOperations,
  ) {}

  /** The execd of the sandbox a request names (`:id`), for the authenticated caller only. */
  static forRequest(
    sandboxes: SandboxOperations,
    request: FastifyRequest & { params: { id: string } },
  ): Promise<ExecdClient> {
    return ExecdClient.of(sandboxes, request.params.id, principalOf(request).accountId);
  }

  static async of(sandboxes: SandboxOperations, id: string, owner: string): Promise<ExecdClient> {
    const { host, port } = await sandboxes.target(id, EXECD_PORT, owner);
    return new ExecdClient(`http://${host}:${port}`, sandboxes.tokens(id).execd, id, sandboxes);
  }

  request(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      ...init,
      headers: { [EXECD_TOKEN_HEADER]: this.token, ...(init.headers as Record<string, string> | undefined) },
    }).catch(async (error: Error) => {
      throw await this.failure(
        new PaddockError(Errors.endpointUnavailable, `the sandbox's execd did not answer: ${error.message}`),
      );
    });
  }

  /**
   * POSTs a body produced while it is sent, over node:http: fetch keeps every chunk of a streamed
   * request body until the request ends, so an upload would sit whole in the server's memory.
   * The source is paused while the socket is full. Answers with execd's response as fetch would.
   */
  send(path: string, headers: Record<string, string>, body: AsyncIterable<Uint8Array>): Promise<Response> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(this.requestOptions(path, headers), (response) => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          for (const item of [value ?? []].flat()) answer.append(name, item);
        resolve(
          new Response(Readable.toWeb(response) as ReadableStream, {
            status: response.statusCode ?? 502,
            headers: answer,
          }),
        );
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
  async *events(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    let response: IncomingMessage;
    try {
      response = await this.open(path, body === undefined ? undefined : JSON.stringify(body), signal);
    } catch (error) {
      throw signal?.aborted ? error : await this.failure(error as PaddockError);
    }
    try {
      if (response.statusCode !== 200) {
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        await checked(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 502 }));
      }
      const parser = new SseParser();
      response.setEncoding("utf8");
      for await (const text of response) {
        yield* parser.push(text as string);
        // execd runs in the sandbox: an event without end must not grow the server.
        if (parser.pendingLength > maxEventLength)
          throw new PaddockError(Errors.endpointUnavailable, "the sandbox's execd sent an event without end");
      }
      yield* parser.end();
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
            [EXECD_OUTPUT_FRAMING_HEADER]: "chunks",
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

/**
 * Aborted when the client of a buffered answer (`/run`, `/code`) leaves before it is sent: the
 * signal for `events()`, so execd's stream is closed and what it runs is stopped, not read on.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => controller.abort());
  return controller.signal;
}

/**
 * execd's codes as registry errors, by code (never by status: several meanings share a 409).
 * File errors take the control plane's file names; a missing interpreter is the template's
 * choice (`language_unavailable`); an unknown code falls back on its status class.
 */
export const execdErrorsByCode: Record<string, ErrorDefinition> = {
  invalid_request: Errors.invalidRequest,
  invalid_json: Errors.invalidRequest,
  payload_too_large: Errors.payloadTooLarge,
  not_found: ControlPlaneErrors.fileNotFound,
  permission_denied: ControlPlaneErrors.permissionDenied,
  already_exists: ControlPlaneErrors.fileConflict,
  directory_not_empty: ControlPlaneErrors.fileConflict,
  range_not_satisfiable: ControlPlaneErrors.rangeNotSatisfiable,
  language_unavailable: ControlPlaneErrors.languageUnavailable,
  bash_unavailable: ControlPlaneErrors.languageUnavailable,
  context_not_found: ExecdErrors.contextNotFound,
  session_not_found: ExecdErrors.sessionNotFound,
  command_not_found: ExecdErrors.commandNotFound,
  terminal_not_found: ExecdErrors.terminalNotFound,
  context_busy: ExecdErrors.contextBusy,
  session_busy: ExecdErrors.sessionBusy,
  session_dead: ExecdErrors.sessionDead,
  not_a_directory: ExecdErrors.notADirectory,
  is_a_directory: ExecdErrors.isADirectory,
  not_supported: ExecdErrors.notSupported,
  cannot_start_process: ExecdErrors.cannotStartProcess,
  isolation_unavailable: ExecdErrors.isolationUnavailable,
  kernel_unavailable: ExecdErrors.kernelUnavailable,
  agent_failed: ExecdErrors.agentFailed,
  not_an_overlay: ExecdErrors.notAnOverlay,
  bind_not_allowed: ExecdErrors.bindNotAllowed,
};

/** execd's refusals as registry errors with the same meaning. */
export async function checked(response: Response): Promise<Response> {
  if (response.ok || response.status === 206) return response;
  const answer = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  const message = answer.message ?? `the sandbox answered ${response.status}`;
  throw new PaddockError(
    execdErrorsByCode[answer.code ?? ""] ??
      (response.status >= 500 ? Errors.endpointUnavailable : Errors.invalidRequest),
    message,
  );
}
