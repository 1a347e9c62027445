import type { IncomingMessage, ServerResponse } from "node:http";
import { Errors, PaddockError } from "@paddock/common/errors";
import { invalidField, missingProperty } from "@paddock/common/validation-messages";
import { type CellSink, checkEnv, codeLanguage } from "../code/cells.js";
import type { CodeContexts } from "../code/contexts.js";
import { sendJson } from "../http/answers.js";
import { optionalString, optionalStringMap, readObject } from "../http/request.js";
import { type Route, route } from "../http/router.js";
import { drained } from "../streams/backpressure.js";
import { outputMessage } from "./code-interpreter-output.js";
import { RICH_OUTPUT_SETUP } from "./code-interpreter-python.js";

type Handler = Route["handler"];

/**
 * E2B's code interpreter (what `@e2b/code-interpreter` calls on port 49999) over execd's code
 * contexts: `POST /execute` streams a cell's output as newline-delimited JSON, `/contexts`
 * creates, lists, restarts and removes contexts. Without a context, a run goes to the
 * language's default context (Python's by default), the one execd's `/code` calls `default`.
 * Bash contexts are /code's alone: their runs are session runs, which only stream as SSE.
 */
export class CodeInterpreter {
  /** Each context's last run, settled or not: a context's runs take turns, as in E2B. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(private readonly code: CodeContexts) {}

  routes(prefix: string): Route[] {
    const routes: Array<[string, string, Handler]> = [
      ["POST", "/execute", (req, res) => this.execute(req, res)],
      ["POST", "/contexts", (req, res) => this.create(req, res)],
      ["GET", "/contexts", (_req, res) => sendJson(res, 200, this.code.contextList())],
      [
        "DELETE",
        "/contexts/:id",
        (_req, res, _url, [id]) => {
          this.code.removeContext(id as string);
          noContent(res);
        },
      ],
      [
        "POST",
        "/contexts/:id/restart",
        async (_req, res, _url, [id]) => {
          await this.code.restartContext(id as string);
          noContent(res);
        },
      ],
    ];
    return routes.map(([method, path, handler]) => route(method, `${prefix}${path}`, plainErrors(handler)));
  }

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const language = noBash(optionalString(body, "language") ?? "python");
    sendJson(res, 200, await this.code.createContext(language, optionalString(body, "cwd")));
  }

  private async execute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const code = optionalString(body, "code");
    if (code === undefined) throw new PaddockError(Errors.invalidRequest, missingProperty("body", "code"));
    const id = optionalString(body, "context_id");
    const language = optionalString(body, "language");
    if (id && language)
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField("body", "give context_id or language, not both"),
      );
    const env = optionalStringMap(body, "env_vars");
    if (env) checkEnv(env);
    const context = await this.code.contextFor({ id, language: language && noBash(language) });
    noBash(context.language);
    // The stream starts now, as E2B's does: waiting for the context's turn is part of the run
    // (the SDK's timeoutMs), not of getting an answer (its requestTimeoutMs).
    const sink = ndjson(res);
    sink.start(context.id);
    // A client that leaves (E2B's SDK aborts at its timeoutMs) interrupts its cell, or drops
    // it from the queue: nobody would read its output.
    const left = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) left.abort();
    });
    await this.inTurn(context.id, async () => {
      if (left.signal.aborted) return;
      try {
        await this.code.execute(context.id, code, sink, {
          env,
          signal: left.signal,
          kernelSetup: context.language === "python" ? RICH_OUTPUT_SETUP : undefined,
        });
      } catch (error) {
        // Refused once streaming (the context was removed, or is busy with a /code run).
        if (!(error instanceof PaddockError)) throw error;
        sink.event({ type: "error", error: { ename: error.code, evalue: error.message, traceback: [] } });
      }
      res.end();
    });
  }

  /** Runs `run` once the context's earlier runs are over; its own outcome is the caller's. */
  private async inTurn(id: string, run: () => Promise<void>): Promise<void> {
    const mine = (this.turns.get(id) ?? Promise.resolve()).then(run);
    const settled = mine.catch(() => undefined);
    this.turns.set(id, settled);
    try {
      await mine;
    } finally {
      if (this.turns.get(id) === settled) this.turns.delete(id);
    }
  }
}

/** The cell's events, one JSON object a line, after a 200 (sent once, whoever starts first). */
function ndjson(res: ServerResponse): CellSink {
  return {
    start() {
      if (res.headersSent) return;
      res.writeHead(200, {
        "content-type": "application/x-ndjson",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      });
      res.flushHeaders();
    },
    event(event) {
      return res.writableEnded ? false : res.write(`${JSON.stringify(outputMessage(event))}\n`);
    },
    drained: () => drained(res),
  };
}

function noBash(language: string): string {
  if (codeLanguage(language) === "bash")
    throw new PaddockError(
      Errors.invalidRequest,
      "bash runs through commands here (sandbox.commands.run), not the code interpreter",
    );
  return language;
}

function noContent(res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}

/**
 * Refusals as E2B's interpreter words them, in plain text: its SDKs show a 404's body (a
 * NotFoundError) and the status of anything else. Other failures take execd's usual answer.
 */
function plainErrors(handler: Handler): Handler {
  return async (req, res, url, params) => {
    try {
      await handler(req, res, url, params);
    } catch (error) {
      if (!(error instanceof PaddockError) || res.headersSent) throw error;
      const text = error.message;
      res.writeHead(error.status, {
        "content-type": "text/plain; charset=utf-8",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    }
  };
}
