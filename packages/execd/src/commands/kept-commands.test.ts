import { SseParser } from "@paddock/common/sse";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Execd } from "../http/server.js";
import { startExecd, testToken } from "../testing.js";

/**
 * Finished commands are kept for their status and logs, within a bound on the memory their logs
 * hold in all: a log is bounded on its own, but a million short lines cost the heap far more than
 * their characters, and 200 such logs would exhaust the sandbox's memory.
 */
describe("finished commands kept", () => {
  let execd: Execd;
  let base: string;
  const headers = { "x-execd-access-token": testToken, "content-type": "application/json" };

  beforeAll(async () => {
    ({ execd, base } = await startExecd());
  });
  afterAll(() => execd?.close());

  /** Starts `command` in the background and waits for its end; its id. */
  async function runToEnd(command: string): Promise<string> {
    const started = await fetch(`${base}/command`, {
      method: "POST",
      headers,
      body: JSON.stringify({ command, background: true }),
    });
    const [init] = new SseParser().push(await started.text());
    const id = String(init?.text);
    await expect
      .poll(async () => ((await (await status(id)).json()) as { running: boolean }).running, {
        timeout: 20_000,
      })
      .toBe(false);
    return id;
  }
  const status = (id: string) => fetch(`${base}/command/status/${id}`, { headers });

  test("the oldest go once the kept logs hold too much; the newest keep status and logs", async () => {
    // A million two-character lines: 2 MiB of text, ~40 MiB of heap.
    const chatty = "yes | head -n 1000000";
    const first = await runToEnd(chatty);
    const second = await runToEnd(chatty);
    expect((await status(first)).status).toBe(200);
    const third = await runToEnd("echo done");
    expect((await status(first)).status).toBe(404);
    for (const id of [second, third]) expect((await status(id)).status).toBe(200);
    const logs = await fetch(`${base}/command/${second}/logs?cursor=999999`, { headers });
    expect(await logs.text()).toBe("y\n");
  });

  test("quiet commands are kept by the hundred", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push(await runToEnd(`echo ${i}`));
    for (const id of ids) expect((await status(id)).status).toBe(200);
  });
});
