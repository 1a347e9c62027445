import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { agentRunning } from "./agent.js";

/**
 * What execd makes of an agent's `/activity`. The session's own code can bind the agent's socket
 * path, so whatever answers there is treated as hostile.
 */
describe("an isolated session's running count, as its agent answers", () => {
  const dir = mkdtempSync(join(tmpdir(), "paddock-agent-activity-"));
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An agent on a socket of its own answering with `listener`; its address. */
  async function agentAnswering(listener: RequestListener) {
    const socketPath = join(dir, `${servers.length}.sock`);
    const server = createServer(listener);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return { socketPath, token: "agent-token" };
  }

  test("an agent's count is taken, asked with the agent's token", async () => {
    let token: string | string[] | undefined;
    const agent = await agentAnswering((req, res) => {
      token = req.headers["x-execd-access-token"];
      res.end(JSON.stringify({ running: 3, requests: 1 }));
    });
    expect(await agentRunning(agent)).toBe(3);
    expect(token).toBe("agent-token");
  });

  test("what is not a count counts none: negative, fractional, a refusal, not JSON", async () => {
    for (const [status, body] of [
      [200, '{"running":-5}'],
      [200, '{"running":1.5}'],
      [401, '{"running":2}'],
      [200, "null"],
      [200, "busy"],
    ] as const) {
      const agent = await agentAnswering((_req, res) => {
        res.writeHead(status);
        res.end(body);
      });
      expect(await agentRunning(agent), body).toBe(0);
    }
  });

  test("an answer too long to be a count is cut off and counts none", async () => {
    let written = 0;
    const agent = await agentAnswering((_req, res) => {
      // A valid count behind 8 MiB of whitespace, written as fast as it is read.
      const chunk = Buffer.alloc(64 * 1024, " ");
      const more = () => {
        while (written < 8 * 2 ** 20) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end('{"running":2}');
      };
      res.on("error", () => undefined);
      more();
    });
    expect(await agentRunning(agent)).toBe(0);
    expect(written).toBeLessThan(8 * 2 ** 20);
  });

  test("an agent that does not answer, or is gone, counts none, within a bound", async () => {
    const silent = await agentAnswering(() => undefined);
    const started = Date.now();
    expect(await agentRunning(silent)).toBe(0);
    // The timeout is 2 s; generous on a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await agentRunning({ socketPath: join(dir, "nobody.sock"), token: "t" })).toBe(0);
  });
});
