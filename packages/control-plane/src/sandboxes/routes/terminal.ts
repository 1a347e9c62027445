import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { isPaddockError } from "@paddock/common";
import type { ExecdClient, TerminalStart } from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import type { RawData, WebSocket } from "ws";
import { ErrorBody, errorResponses } from "../../http/error-schemas.js";
import { acceptWebSocket, sendPaced, webSocketHighWater } from "../../http/websocket-upgrade.js";
import { type ExecdRouteOptions, execdRoutes } from "../execd-client.js";
import { assertCommand } from "../input-checks.js";
import { SandboxParams } from "../schemas/sandboxes.js";

const Size = Type.Integer({ minimum: 1, maximum: 10_000 });
const TerminalQuery = Type.Object(
  {
    cols: Type.Optional({ ...Size, default: 80 }),
    rows: Type.Optional({ ...Size, default: 24 }),
    command: Type.Optional(
      Type.String({ minLength: 1, maxLength: 65_536, description: "Run this instead of a login shell." }),
    ),
  },
  { additionalProperties: false },
);

const protocol = `A terminal in the sandbox over a WebSocket (Authorization as for every call; errors before
the upgrade are ordinary JSON answers). The server runs a login shell (or \`command\`) on a
pseudo-terminal of \`cols\` × \`rows\`. Client → server: binary frames are input bytes; text frames
are JSON control messages, \`{"type":"resize","cols":C,"rows":R}\`. Server → client: binary
frames are output bytes; a text frame \`{"type":"exit","exitCode":N}\` when the program ends
(then close 1000), or \`{"type":"error","code":…,"detail":…}\` when the terminal fails (then
close 1011). Closing the socket hangs the terminal up.`;

/** `GET /sandboxes/{id}/terminal`: an interactive terminal, bridged to execd's `/pty`. */
export const terminalRoutes: FastifyPluginAsyncTypebox<ExecdRouteOptions> = async (app, options) => {
  // Every call here runs code in the sandbox: counted as a command.
  const execdFor = execdRoutes(app, options, "commands");

  app.get(
    "/sandboxes/:id/terminal",
    {
      schema: {
        tags: ["sandboxes"],
        summary: "Open an interactive terminal (WebSocket)",
        description: protocol,
        params: SandboxParams,
        querystring: TerminalQuery,
        response: { ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const { cols, rows, command } = request.query;
      if (command !== undefined) assertCommand(command, {}, "query");
      // The owner check and the sandbox's state answer as HTTP, before anything is upgraded.
      const execd = await execdFor(request);
      const socket = await acceptWebSocket(request, reply);
      await bridge(socket, execd, { cols, rows, ...(command !== undefined ? { command } : {}) });
    },
  );
};

/** Runs the terminal until it exits, fails or the client leaves. */
async function bridge(socket: WebSocket, execd: ExecdClient, start: TerminalStart): Promise<void> {
  const hangUp = new AbortController();
  socket.on("close", () => hangUp.abort());
  socket.on("error", () => hangUp.abort());
  let started: (id: string) => void = () => {};
  const terminal = new Promise<string>((resolve) => {
    started = resolve;
  });
  // Input and resizes reach execd one at a time, in the order they were sent, once it has
  // named the terminal (what a client types at once waits for that).
  // What waits in that queue is bounded: past `webSocketHighWater` the client's socket is no
  // longer read, until execd (and the program reading the terminal) has taken it.
  let queue = Promise.resolve();
  let queued = 0;
  const forward = (size: number, send: (id: string) => Promise<void>) => {
    queued += size;
    if (queued > webSocketHighWater) socket.pause();
    queue = queue
      .then(async () => {
        const id = await terminal;
        if (!hangUp.signal.aborted) await send(id);
      })
      .catch(() => {}) // a terminal that has just exited refuses input; its exit is reported below
      .finally(() => {
        queued -= size;
        if (queued <= webSocketHighWater && socket.isPaused) socket.resume();
      });
  };
  socket.on("message", (data: RawData, isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) return forward(bytes.length, (id) => execd.terminalInput(id, bytes));
    const message = parseControl(bytes.toString("utf8"));
    if (message) forward(JSON.stringify(message).length, (id) => execd.resizeTerminal(id, message));
  });

  try {
    for await (const event of execd.startTerminal(start, hangUp.signal)) {
      if (event.type === "init") started(String(event.text));
      // Paced: while the client does not read, execd's stream is not read either, which stops
      // execd reading the terminal, which blocks the program writing to it.
      else if (event.type === "output") await sendPaced(socket, Buffer.from(String(event.data), "base64"));
      else if (event.type === "exit") {
        socket.send(JSON.stringify({ type: "exit", exitCode: Number(event.exit_code) }));
        socket.close(1000);
        return;
      }
    }
    throw new Error("the terminal's stream ended without an exit");
  } catch (error) {
    if (hangUp.signal.aborted) return;
    const code = isPaddockError(error) ? error.code : "endpoint_unavailable";
    socket.send(JSON.stringify({ type: "error", code, detail: (error as Error).message }));
    socket.close(1011);
  }
}

/** A resize message, or undefined for anything else (ignored, as terminals ignore unknown sequences). */
function parseControl(text: string): { rows: number; cols: number } | undefined {
  try {
    const message = JSON.parse(text) as { type?: unknown; rows?: unknown; cols?: unknown };
    const valid = (size: unknown) =>
      Number.isInteger(size) && (size as number) >= 1 && (size as number) <= 10_000;
    if (message.type === "resize" && valid(message.rows) && valid(message.cols))
      return { rows: message.rows as number, cols: message.cols as number };
  } catch {
    // Not JSON: ignored.
  }
  return undefined;
}
