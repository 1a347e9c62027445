import { SseParser } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

describe("a command stream whose sandbox dies", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string };

  beforeAll(async () => {
    t = await startTestServer();
    connection = await userConnection(t, "dying");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("ends within seconds with an error event that carries the code and no exit code", async () => {
    const sandbox = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
    const response = await fetch(`${t.url}/sandboxes/${sandbox.id}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo started; sleep 600" }),
    });
    const parser = new SseParser();
    const events = [];
    const decoder = new TextDecoder();
    let killedAt = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      const batch = parser.push(decoder.decode(chunk, { stream: true }));
      events.push(...batch);
      if (!killedAt && batch.some((event) => event.type === "stdout")) {
        killedAt = Date.now();
        await Sandbox.kill(sandbox.id, connection);
      }
    }
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(events.map((event) => event.type)).toEqual(["init", "stdout", "error"]);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      code: expect.any(String),
      detail: expect.any(String),
    });
    expect(events.at(-1)).not.toHaveProperty("exit_code");
  });

  test("a background command's stream ends after init without an error: it runs on", async () => {
    const sandbox = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
    const response = await fetch(`${t.url}/sandboxes/${sandbox.id}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "sleep 1; echo done > /tmp/background", background: true }),
    });
    const parser = new SseParser();
    const events = parser.push(await response.text()).concat(parser.end());
    expect(events.map((event) => event.type)).toEqual(["init"]);
    await expect
      .poll(async () => (await sandbox.commands.run("cat /tmp/background || true")).stdout, {
        timeout: 10_000,
      })
      .toBe("done\n");
    await sandbox.kill();
  });
});
