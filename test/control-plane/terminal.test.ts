import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

/** A terminal client as the CLI and the dashboard hold one: output so far, and how it ended. */
class TerminalClient {
  output = "";
  messages: Record<string, unknown>[] = [];
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) this.output += data.toString();
      else this.messages.push(JSON.parse(data.toString()));
    });
    socket.on("close", (code) => {
      this.closeCode = code;
    });
  }

  static open(url: string, apiKey: string): Promise<TerminalClient> {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${apiKey}` } });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new TerminalClient(socket)));
      socket.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk;
        });
        response.on("end", () =>
          reject(Object.assign(new Error(body), { status: response.statusCode, body })),
        );
      });
      socket.once("error", reject);
    });
  }

  type(text: string): void {
    this.socket.send(Buffer.from(text), { binary: true });
  }

  async until(condition: () => boolean): Promise<void> {
    await expect.poll(condition, { timeout: 10_000, interval: 20 }).toBe(true);
  }
}

describe("GET /sandboxes/{id}/terminal", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string };
  let sandbox: Sandbox;
  const terminalUrl = (id: string, query = "") =>
    `${t.url.replace("http", "ws")}/sandboxes/${id}/terminal${query}`;

  beforeAll(async () => {
    t = await startTestServer();
    connection = await userConnection(t, "terminal");
    sandbox = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a login shell: its size, a resize, Ctrl-C, and the exit code when it ends", async () => {
    const terminal = await TerminalClient.open(
      terminalUrl(sandbox.id, "?cols=100&rows=30"),
      connection.apiKey,
    );
    terminal.type("stty size; tty\n");
    await terminal.until(() => /30 100\r\n\/dev\/pts\/\d+/.test(terminal.output));
    terminal.socket.send(JSON.stringify({ type: "resize", cols: 132, rows: 43 }));
    terminal.socket.send("not json: ignored");
    terminal.type("stty size\n");
    await terminal.until(() => terminal.output.includes("43 132"));
    terminal.type("echo sl''eeping; sleep 1000\n");
    await terminal.until(() => terminal.output.includes("sleeping\r\n"));
    await new Promise((resolve) => setTimeout(resolve, 300)); // sleep in the foreground by now
    terminal.type("\x03");
    terminal.type("echo after-interrupt\n");
    await terminal.until(() => terminal.output.includes("after-interrupt\r\n"));
    terminal.type("exit 7\n");
    await terminal.until(() => terminal.closeCode !== undefined);
    expect(terminal.messages.at(-1)).toEqual({ type: "exit", exitCode: 7 });
    expect(terminal.closeCode).toBe(1000);
  });

  test("a command instead of a shell", async () => {
    const terminal = await TerminalClient.open(
      terminalUrl(
        sandbox.id,
        `?command=${encodeURIComponent("python3 -c 'import sys; print(sys.stdin.isatty())'")}`,
      ),
      connection.apiKey,
    );
    await terminal.until(() => terminal.closeCode !== undefined);
    expect(terminal.output).toContain("True");
    expect(terminal.messages).toEqual([{ type: "exit", exitCode: 0 }]);
  });

  test("refusals come as JSON answers before any upgrade", async () => {
    const refusal = async (url: string, apiKey: string) =>
      TerminalClient.open(url, apiKey).then(
        () => undefined,
        (error: { status: number; body: string }) => ({ status: error.status, ...JSON.parse(error.body) }),
      );
    expect(await refusal(terminalUrl(sandbox.id), "pdk_wrong")).toMatchObject({
      status: 401,
      code: "unauthorized",
    });
    expect(await refusal(terminalUrl("sbx_missing"), connection.apiKey)).toMatchObject({
      status: 404,
      code: "sandbox_not_found",
    });
    expect(await refusal(terminalUrl(sandbox.id, "?cols=0"), connection.apiKey)).toMatchObject({
      status: 400,
    });
    const other = await userConnection(t, "terminal-other");
    expect(await refusal(terminalUrl(sandbox.id), other.apiKey)).toMatchObject({ status: 404 });
    const plain = await fetch(`${t.url}/sandboxes/${sandbox.id}/terminal`, {
      headers: { authorization: `Bearer ${connection.apiKey}` },
    });
    expect(plain.status).toBe(426);
    expect(await plain.json()).toMatchObject({ code: "websocket_required" });
    const unknownPath = await refusal(`${t.url.replace("http", "ws")}/no/such/path`, connection.apiKey);
    expect(unknownPath).toMatchObject({ status: 404 });
  });

  test("a terminal whose sandbox is deleted ends with an error within seconds", async () => {
    const doomed = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
    const terminal = await TerminalClient.open(terminalUrl(doomed.id), connection.apiKey);
    terminal.type("echo ready\n");
    await terminal.until(() => terminal.output.includes("ready\r\n"));
    const started = Date.now();
    await doomed.kill();
    await terminal.until(() => terminal.closeCode !== undefined);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(terminal.closeCode).toBe(1011);
    expect(terminal.messages.at(-1)).toMatchObject({ type: "error" });
  });
});
