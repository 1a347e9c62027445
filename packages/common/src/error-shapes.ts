import { type ErrorDefinition, Errors } from "./errors.js";

/**
 * How an error body looks on a surface: `{code, message}` (the wire-compatible APIs: /v1, execd)
 * or `{code, detail}` (the control plane).
 */
/** `{code, message}` (/v1, execd), `{code, detail}` (the control plane), `{code: <status>, message}` (E2B). */
export type ErrorShape = "message" | "detail" | "status";

export function errorBody(
  shape: ErrorShape,
  code: string,
  text: string,
  status = 500,
): Record<string, string | number> {
  if (shape === "status") return { code: status, message: text };
  return shape === "message" ? { code, message: text } : { code, detail: text };
}

/**
 * The whole HTTP answer to a request the HTTP parser refused before any framework saw it (headers
 * too large, a malformed request line, a timeout). The surface is told by the request path, read
 * from what the parser had received; `shapeFor` maps it (an unknown path gets `shapeFor("")`).
 */
export function clientErrorAnswer(
  error: Error & { code?: string; rawPacket?: unknown },
  shapeFor: (path: string) => ErrorShape,
): string {
  const [definition, text]: [ErrorDefinition, string] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [
          Errors.headersTooLarge,
          "the request line and headers are larger than 16 KiB; send long values in the body",
        ]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [Errors.requestTimeout, "the request was not received in time"]
        : [Errors.invalidRequest, "the request is not valid HTTP/1.1"];
  const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 512).toString("latin1") : "";
  const path = /^[A-Z]+ (\/[^\s?#]*)/.exec(raw)?.[1] ?? "";
  const body = JSON.stringify(errorBody(shapeFor(path), definition.code, text, definition.status));
  const reason = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" }[
    definition.status
  ];
  return `HTTP/1.1 ${definition.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
