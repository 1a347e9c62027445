/**
 * A cell's events as the code interpreter's `/execute` stream carries them: one JSON object per
 * line, each read by E2B's SDKs by its `type` (stdout, stderr, result, error,
 * number_of_executions).
 */
import type { CellEvent } from "../code/cells.js";
import { CHART_MIME, DATA_MIME } from "./code-interpreter-python.js";

export type OutputMessage = { type: string } & Record<string, unknown>;

/** A result's fields by the MIME type they come from; any other type goes under `extra`. */
const RESULT_FIELDS: Record<string, string> = {
  "text/plain": "text",
  "text/html": "html",
  "text/markdown": "markdown",
  "image/svg+xml": "svg",
  "image/png": "png",
  "image/jpeg": "jpeg",
  "application/pdf": "pdf",
  "text/latex": "latex",
  "application/json": "json",
  "application/javascript": "javascript",
  [DATA_MIME]: "data",
  [CHART_MIME]: "chart",
};

export function outputMessage(event: CellEvent, now: Date = new Date()): OutputMessage {
  switch (event.type) {
    case "stdout":
    case "stderr":
      // E2B's Python SDK reads a timestamp on every line of output.
      return { type: event.type, text: event.text, timestamp: now.toISOString() };
    case "execution_count":
      return { type: "number_of_executions", execution_count: event.execution_count };
    case "error":
      return {
        type: "error",
        name: event.error.ename,
        value: event.error.evalue,
        traceback: event.error.traceback.join("\n"),
      };
    case "result":
      return { type: "result", ...resultFields(event.results), is_main_result: event.main };
  }
}

function resultFields(bundle: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [mime, value] of Object.entries(bundle)) {
    const field = RESULT_FIELDS[mime];
    if (field) fields[field] = value;
    else extra[mime] = value;
  }
  // As E2B's interpreter does, a string's text comes without the quotes of its repr.
  if (typeof fields.text === "string" && /^'[\s\S]*'$/.test(fields.text))
    fields.text = fields.text.slice(1, -1);
  if (Object.keys(extra).length > 0) fields.extra = extra;
  return fields;
}
