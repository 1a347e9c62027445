/**
 * A kernel's iopub messages as cell events, shaped as the built-in drivers' so callers cannot
 * tell which one ran their cell (except for richer results).
 */
import type { CellEvent } from "./cells.js";
import type { JupyterMessage } from "./jupyter-wire.js";

/** IPython colours its tracebacks; the events carry plain text. */
const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g");

export function kernelEvent(message: JupyterMessage): CellEvent | undefined {
  const content = message.content;
  switch (message.header.msg_type) {
    case "execute_input":
      return { type: "execution_count", execution_count: Number(content.execution_count) };
    case "stream":
      return { type: content.name === "stderr" ? "stderr" : "stdout", text: String(content.text ?? "") };
    case "execute_result":
    case "display_data":
    case "update_display_data":
      return {
        type: "result",
        results: (content.data ?? {}) as Record<string, unknown>,
        // The cell's own value, as opposed to what it displayed on the way.
        main: message.header.msg_type === "execute_result",
      };
    case "error":
      return {
        type: "error",
        error: {
          ename: String(content.ename ?? "Error"),
          evalue: String(content.evalue ?? ""),
          traceback: tracebackLines(content.traceback),
        },
      };
    default:
      // status, clear_output, comm traffic: nothing a caller sees.
      return undefined;
  }
}

/** The error an execute_reply with status `error` or `aborted` carries. */
export function replyError(reply: Record<string, unknown>): CellEvent {
  if (reply.status === "aborted")
    return {
      type: "error",
      error: { ename: "ExecutionAborted", evalue: "the kernel aborted this cell", traceback: [] },
    };
  return kernelEvent({
    header: { msg_id: "", session: "", username: "", date: "", msg_type: "error", version: "" },
    parent_header: {},
    metadata: {},
    content: reply,
  }) as CellEvent;
}

/** IPython's traceback entries are multi-line blocks; the built-in drivers send one line each. */
export function tracebackLines(traceback: unknown): string[] {
  if (!Array.isArray(traceback)) return [];
  return traceback
    .map((entry) => String(entry).replace(ANSI_ESCAPE, ""))
    .join("\n")
    .split("\n")
    .filter((line) => line.trim() !== "");
}
