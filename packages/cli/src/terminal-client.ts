import { errorFor, PaddockError } from "paddock";
import WebSocket from "ws";

export interface TerminalSize {
  cols: number;
  rows: number;
}

/**
 * Opens `GET /sandboxes/{id}/terminal` as a WebSocket. A refusal before the upgrade (a wrong key,
 * an unknown or paused sandbox) rejects with the server's error, as any other call would.
 */
export function openTerminal(
  connection: { baseUrl: string; apiKey: string },
  sandboxId: string,
  size: TerminalSize,
  command?: string,
): Promise<WebSocket> {
  const query = new URLSearchParams({
    cols: String(size.cols),
    rows: String(size.rows),
    ...(command !== undefined ? { command } : {}),
  });
  const url = `${connection.baseUrl.replace(/^http/, "ws")}/sandboxes/${encodeURIComponent(sandboxId)}/terminal?${query}`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${connection.apiKey}` } });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      response.on("end", () => {
        const answer = parseJson(body) as { code?: string; detail?: string } | undefined;
        const status = response.statusCode ?? 0;
        reject(
          errorFor(
            status,
            answer?.code ?? "unknown_error",
            answer?.detail ?? `the server answered ${status}`,
          ),
        );
      });
    });
    socket.once("error", (error) => reject(connectionFailed(error)));
  });
}

/**
 * Runs an open terminal until it ends: `input` bytes go to it, its output to `output`. Resolves
 * with the program's exit code; rejects with the server's error (a sandbox that died, say) or
 * when the connection drops without an exit.
 */
export function runTerminal(
  socket: WebSocket,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let exitCode: number | undefined;
    let failure: PaddockError | undefined;
    input.on("data", (bytes: Buffer) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(bytes, { binary: true });
    });
    socket.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        output.write(data);
        return;
      }
      const message = parseJson(data.toString("utf8")) as
        | { type?: string; exitCode?: number; code?: string; detail?: string }
        | undefined;
      if (message?.type === "exit") exitCode = Number(message.exitCode);
      else if (message?.type === "error")
        failure = new PaddockError(String(message.detail), String(message.code), 0);
    });
    socket.on("error", (error) => {
      failure ??= connectionFailed(error);
    });
    socket.on("close", (code) => {
      if (failure) reject(failure);
      else if (exitCode !== undefined) resolve(exitCode);
      else
        reject(
          new PaddockError(
            `the terminal's connection closed (${code}) before the shell exited`,
            "connection_failed",
            0,
            true,
          ),
        );
    });
  });
}

/** Tells the terminal its new size (the local one changed). */
export function sendResize(socket: WebSocket, size: TerminalSize): void {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", ...size }));
}

function connectionFailed(error: Error): PaddockError {
  return new PaddockError(`the terminal's connection failed: ${error.message}`, "connection_failed", 0, true);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
