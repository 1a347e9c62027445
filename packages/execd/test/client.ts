import {
  EXECD_OUTPUT_FRAMING_HEADER,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
  type SseEvent,
  SseParser,
} from "@paddock/common";
import type { CreateSandboxInput } from "@paddock/runtime";
import { openTestStack, type TestSecureRuntime, type TestStack } from "@paddock/runtime/testing";
import { afterAll, beforeAll } from "vitest";

/** A small execd client for tests: base URL and token of one sandbox. */
export class ExecdClient {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  static async of(t: TestStack, sandboxId: string): Promise<ExecdClient> {
    const { host } = await t.stack.sandboxes.target(sandboxId, EXECD_PORT);
    return new ExecdClient(`http://${host}:${EXECD_PORT}`, t.stack.sandboxes.tokens(sandboxId).execd);
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers: Record<string, string> = {
      [EXECD_TOKEN_HEADER]: this.token,
      ...(init.headers as Record<string, string>),
    };
    if (typeof init.body === "string" && !headers["content-type"])
      headers["content-type"] = "application/json";
    return fetch(`${this.base}${path}`, { ...init, headers });
  }

  async json(path: string, init: RequestInit = {}): Promise<any> {
    const response = await this.fetch(path, init);
    return response.json();
  }

  /** POSTs and collects the whole SSE stream. */
  async events(path: string, body: unknown, headers: Record<string, string> = {}): Promise<SseEvent[]> {
    const response = await this.fetch(path, { method: "POST", body: JSON.stringify(body), headers });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    const parser = new SseParser();
    return parser.push(await response.text()).concat(parser.end());
  }

  /** execd's own resident memory inside the sandbox, in KiB. */
  async rssKib(): Promise<number> {
    const { stdout } = await this.run(
      "for f in /proc/[0-9]*; do [ $f = /proc/1 ] && continue; if tr '\\0' ' ' < $f/cmdline 2>/dev/null | grep -q '/opt/paddock/exec[d].js'; then grep VmRSS $f/status; fi; done",
    );
    return Number(/VmRSS:\s+(\d+)/.exec(stdout)?.[1]);
  }

  /** Runs a foreground command: its stdout, stderr (exactly the bytes written) and exit code. */
  async run(command: string, options: Record<string, unknown> = {}) {
    const output = await this.output("/command", { command, ...options });
    return { ...output, exitCode: output.last?.exit_code as number };
  }

  /** POSTs a run streamed in chunks: its events, stdout and stderr (exact bytes) and last event. */
  async output(path: string, body: Record<string, unknown>) {
    const events = await this.events(path, body, { [EXECD_OUTPUT_FRAMING_HEADER]: "chunks" });
    const text = (type: string) =>
      events
        .filter((event) => event.type === type)
        .map((event) => String(event.text ?? ""))
        .join("");
    return { events, stdout: text("stdout"), stderr: text("stderr"), last: events.at(-1) };
  }
}

/** Counts processes in the sandbox whose command line contains `needle` (no procps needed). */
export const countProcesses = (needle: string) =>
  `n=0; for f in /proc/[0-9]*/cmdline; do c=$(tr '\\0' ' ' < $f 2>/dev/null); case "$c" in *"${needle}"*) case "$c" in *for\\ f\\ in*) ;; *) n=$((n+1));; esac;; esac; done; echo $n`;

/** A real sandbox through the runtime stack, and an execd client for it. Dispose with `t.dispose()`. */
export async function sandboxWithExecd(
  secure: TestSecureRuntime,
  request: CreateSandboxInput,
): Promise<{ t: TestStack; execd: ExecdClient }> {
  const t = await openTestStack({ secure });
  const sandbox = await t.stack.sandboxes.create({ entrypoint: ["sleep", "infinity"], ...request });
  return { t, execd: await ExecdClient.of(t, sandbox.id) };
}

/**
 * For a describe block: a sandbox made before its tests (then `setup` run in it) and removed
 * after them; `use` receives its execd client.
 */
export function sandboxPerSuite(
  secure: TestSecureRuntime,
  request: CreateSandboxInput,
  use: (execd: ExecdClient) => void,
  setup?: (execd: ExecdClient) => Promise<void>,
): void {
  let t: TestStack | undefined;
  beforeAll(async () => {
    const made = await sandboxWithExecd(secure, request);
    t = made.t;
    use(made.execd);
    await setup?.(made.execd);
  });
  afterAll(async () => {
    await t?.dispose();
  });
}
