import { stripVTControlCharacters } from "node:util";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type CodeResult, Sandbox } from "paddock";
import { z } from "zod";
import { BoundedText, formatBytes, maxImageBytes, truncationNote } from "../bounded-output.js";
import { defineTool } from "../tool.js";
import { textResult } from "../tool-results.js";
import { sandboxIdField } from "./sandbox-tools.js";

/**
 * A command's time limit when the call names none: under the minute most MCP clients wait for a
 * tool's answer, so the answer (with the output so far) arrives before the client gives up.
 */
export const defaultCommandTimeoutMs = 50_000;

const commandOutputHint =
  "Redirect the output to a file (`command > /tmp/out.txt 2>&1`) and read parts of it with read_file or with head, tail, grep or sed -n.";

export const runCommand = defineTool({
  name: "run_command",
  surface: "sandboxes",
  title: "Run a shell command",
  description: `Runs a shell command (bash -c) in the sandbox as root and waits for it to finish; answers its exit code, stdout and stderr (each cut after 32 KiB, with a note). A non-zero exit code is a result, not an error. For a server or a long job, start it in the background with its output in a file: \`nohup cmd > /tmp/log 2>&1 &\`.`,
  input: {
    sandboxId: sandboxIdField,
    command: z
      .string()
      .min(1)
      .max(256 * 1024)
      .describe("The command line, as typed in bash."),
    cwd: z.string().min(1).max(4096).optional().describe("Working directory (absolute path)."),
    env: z
      .record(z.string().min(1).max(256), z.string().max(32 * 1024))
      .optional()
      .describe("Extra environment variables for this command."),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600 * 1000)
      .default(defaultCommandTimeoutMs)
      .describe(
        "Milliseconds before the command is killed; default 50000. Raise it only as far as the client waits for a tool.",
      ),
  },
  annotations: { destructiveHint: true, openWorldHint: true },
  async run({ sandboxId, command, cwd, env, timeoutMs }, { connection, signal }) {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    const stdout = new BoundedText();
    const stderr = new BoundedText();
    let exitCode = -1;
    const startedAt = Date.now();
    // Streamed, so only the kept part of the output is ever held; the rest is counted.
    for await (const event of sandbox.commands.stream(command, {
      ...(cwd ? { cwd } : {}),
      ...(env ? { envs: env } : {}),
      timeoutMs,
      signal,
    })) {
      if (event.type === "exit") exitCode = event.exitCode;
      else (event.type === "stdout" ? stdout : stderr).add(event.text);
    }
    const timedOut = exitCode !== 0 && Date.now() - startedAt >= timeoutMs;
    const status = timedOut
      ? `exit code: ${exitCode} (stopped: it ran past its timeout of ${timeoutMs} ms)`
      : `exit code: ${exitCode}`;
    return textResult([status, section("stdout", stdout), section("stderr", stderr)].join("\n"));
  },
});

function section(name: string, output: BoundedText): string {
  if (output.totalBytes === 0) return `${name}: (empty)`;
  const note = output.cutBytes > 0 ? truncationNote(output, commandOutputHint) : "";
  return `${name}:\n${output.text}${note}`;
}

export const runCode = defineTool({
  name: "run_code",
  surface: "sandboxes",
  title: "Run code",
  description:
    "Runs code in a stateful interpreter in the sandbox, like a notebook cell: variables, imports and functions stay defined for the next run_code in the same sandbox and language. Answers stdout, stderr, the value of the last expression, charts as images, and the error with its traceback if it failed.",
  input: {
    sandboxId: sandboxIdField,
    code: z
      .string()
      .min(1)
      .max(1024 * 1024)
      .describe("The code to run."),
    language: z
      .enum(["python", "javascript", "typescript", "bash"])
      .default("python")
      .describe("The interpreter; default python."),
  },
  annotations: { destructiveHint: true, openWorldHint: true },
  async run({ sandboxId, code, language }, { connection, signal }) {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    return codeResult(await sandbox.runCode(code, { language, signal }));
  },
});

/** The MIME types of a cell's results returned as images (when small enough); the rest as text. */
const imageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

function codeResult(result: CodeResult): CallToolResult {
  const text = new BoundedText();
  const images: CallToolResult["content"] = [];
  const write = (line: string) => text.add(`${line}\n`);
  if (result.stdout) write(`stdout:\n${result.stdout}`);
  if (result.stderr) write(`stderr:\n${result.stderr}`);
  for (const [index, item] of result.results.entries()) {
    const image = imageTypes.find((type) => typeof item[type] === "string");
    const data = image ? String(item[image]) : "";
    // base64: four characters per three bytes.
    if (image && (data.length * 3) / 4 <= maxImageBytes && images.length < 4) {
      images.push({ type: "image", data, mimeType: image });
      write(`result ${index + 1}: ${image} (shown as an image)`);
    } else if (typeof item["text/plain"] === "string") {
      write(`result ${index + 1}:\n${item["text/plain"]}`);
    } else {
      const kinds = Object.keys(item).join(", ");
      write(
        `result ${index + 1}: ${kinds || "empty"} (${image ? `${formatBytes((data.length * 3) / 4)}, ` : ""}not shown)`,
      );
    }
  }
  if (result.error) {
    write(`error: ${result.error.name}: ${result.error.value}`);
    // IPython colours its tracebacks; a model reads them better plain.
    write(stripVTControlCharacters(result.error.traceback.join("\n")));
  }
  if (result.truncated) write("(the server kept the first 8 MiB of this run's output)");
  if (text.totalBytes === 0) write("(no output)");
  const note =
    text.cutBytes > 0
      ? truncationNote(text, "Write large output to a file in the code and read parts of it with read_file.")
      : "";
  // A cell that raised is still a result: the error is the code's, not the call's.
  return { content: [{ type: "text", text: text.text + note }, ...images] };
}
