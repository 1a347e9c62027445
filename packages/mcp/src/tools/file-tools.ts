import { posix } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Files, Sandbox } from "paddock";
import { z } from "zod";
import { formatBytes, maxImageBytes, maxListedEntries, maxTextBytes, utf8Prefix } from "../bounded-output.js";
import { defineTool } from "../tool.js";
import { textResult } from "../tool-results.js";
import { sandboxIdField } from "./sandbox-tools.js";

const pathField = z.string().min(1).max(4096);

export const readFile = defineTool({
  name: "read_file",
  surface: "sandboxes",
  title: "Read a file",
  description:
    "Reads a file from the sandbox. Text comes back as text (the first 32 KiB, with a note when the file is longer); a small image (PNG, JPEG, GIF, WebP up to 256 KiB) as an image; other binary files as a note with their size.",
  input: { sandboxId: sandboxIdField, path: pathField.describe("Absolute path of the file.") },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ sandboxId, path }, { connection, signal }) {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    const stream = await sandbox.files.read(path, { format: "stream", signal });
    const { bytes, complete } = await readAtMost(stream, maxImageBytes);
    const image = imageTypeOf(bytes);
    if (image && complete)
      return {
        content: [
          { type: "text", text: `${path}: ${image}, ${formatBytes(bytes.length)}` },
          { type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: image },
        ],
      };
    const size = complete ? formatBytes(bytes.length) : await sizeOf(sandbox.files, path, bytes.length);
    if (isBinary(bytes))
      return textResult(
        `${path} is a binary file of ${size}; it is not shown. Look into it with run_command (file, xxd -l 512, base64 on a part).`,
      );
    if (complete && bytes.length <= maxTextBytes) return textResult(new TextDecoder().decode(bytes));
    return textResult(
      `${utf8Prefix(bytes, maxTextBytes)}\n[truncated: showed the first ${formatBytes(maxTextBytes)} of ${size}. Read other parts with run_command: tail -c 32768 FILE, sed -n '1000,1200p' FILE, grep -n PATTERN FILE.]`,
    );
  },
});

/** The first `limit` bytes of a stream and whether that was all of it; the rest is never read. */
async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; complete: boolean }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length <= limit) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), complete: true };
      chunks.push(value);
      length += value.length;
    }
    return { bytes: Buffer.concat(chunks).subarray(0, limit), complete: false };
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The file's size from its directory's listing, or "more than …" when it cannot be told. */
async function sizeOf(files: Files, path: string, atLeast: number): Promise<string> {
  const entries = await files.list(posix.dirname(path)).catch(() => []);
  const entry = entries.find((info) => info.path === path || info.path === posix.normalize(path));
  return entry ? formatBytes(entry.size) : `more than ${formatBytes(atLeast)}`;
}

const signatures: Array<[string, number[]]> = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47]],
  ["image/jpeg", [0xff, 0xd8, 0xff]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38]],
];

function imageTypeOf(bytes: Uint8Array): string | undefined {
  for (const [type, magic] of signatures) if (magic.every((byte, at) => bytes[at] === byte)) return type;
  // RIFF....WEBP
  if (
    Buffer.from(bytes.subarray(0, 4)).toString() === "RIFF" &&
    Buffer.from(bytes.subarray(8, 12)).toString() === "WEBP"
  )
    return "image/webp";
  return undefined;
}

/** Binary as git tells it: a NUL byte among the first 8 KiB. */
function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

export const writeFile = defineTool({
  name: "write_file",
  surface: "sandboxes",
  title: "Write a file",
  description:
    "Writes a file in the sandbox, creating its parent directories and replacing what was there. For binary content send base64 with encoding `base64`.",
  input: {
    sandboxId: sandboxIdField,
    path: pathField.describe("Absolute path of the file."),
    content: z
      .string()
      .max(768 * 1024)
      .describe("The file's content (up to 768 KiB per call)."),
    encoding: z
      .enum(["utf8", "base64"])
      .default("utf8")
      .describe("How `content` is written: `utf8` text (default) or `base64` for bytes."),
  },
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ sandboxId, path, content, encoding }, { connection, signal }): Promise<CallToolResult> {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    const data = encoding === "base64" ? new Uint8Array(Buffer.from(content, "base64")) : content;
    const written = await sandbox.files.write(path, data, { signal });
    return textResult(`Wrote ${formatBytes(written.size)} to ${written.path}.`);
  },
});

export const listDirectory = defineTool({
  name: "list_directory",
  surface: "sandboxes",
  title: "List a directory",
  description: "Lists what a directory in the sandbox holds: each entry's type, size and path.",
  input: {
    sandboxId: sandboxIdField,
    path: pathField.describe("Absolute path of the directory."),
    depth: z
      .number()
      .int()
      .min(1)
      .max(5)
      .default(1)
      .describe("How many levels down to list; 1 (default) is the directory's own entries."),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ sandboxId, path, depth }, { connection, signal }) {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    const entries = await sandbox.files.list(path, { depth, signal });
    if (entries.length === 0) return textResult(`${path} is empty.`);
    const lines = entries
      .slice(0, maxListedEntries)
      .map((entry) => `${entry.type.padEnd(9)} ${String(entry.size).padStart(10)}  ${entry.path}`);
    if (entries.length > maxListedEntries)
      lines.push(
        `[${entries.length - maxListedEntries} more entries not shown; list a subdirectory, or use find with run_command.]`,
      );
    return textResult(lines.join("\n"));
  },
});
