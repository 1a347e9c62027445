import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { encodeSse, type SseEvent } from "./sse.js";
import { openSseWriter } from "./sse-writer.js";

/**
 * The raw text of a stream whose server sends `events` once with `send`, then once more as
 * bytes encoded ahead with `sendEncoded`.
 */
async function streamed(events: SseEvent[]): Promise<string> {
  const server = createServer((_req, res) => {
    const sse = openSseWriter(res, { timestamp: true });
    for (const event of events) sse.send(event);
    const now = Date.now();
    sse.sendEncoded(Buffer.from(events.map((event) => encodeSse(event, now)).join("")));
    sse.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<string>((resolve, reject) => {
      request({ port, host: "127.0.0.1" }, (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve(text));
      })
        .on("error", reject)
        .end();
    });
  } finally {
    server.close();
  }
}

describe("openSseWriter with timestamps", () => {
  it("sends each event as encodeSse of the event with its timestamp last, one by one or together", async () => {
    const events: SseEvent[] = [
      { type: "stdout", text: 'a "quoted" line\\ with \u0001 and é and \ud83d' },
      { type: "stderr", text: "" },
      { type: "execution_complete", execution_time: 3, exit_code: 0 },
      // An event with its own timestamp keeps the key where it was, its value replaced.
      { type: "metrics", timestamp: 1, cpu: 0.5 },
    ];
    const blocks = (await streamed(events)).split("\n\n").filter(Boolean);
    expect(blocks).toHaveLength(events.length * 2);
    blocks.forEach((block, index) => {
      const event = events[index % events.length] as SseEvent;
      const timestamp = (JSON.parse(block.split("\ndata: ")[1] as string) as { timestamp: number }).timestamp;
      expect(timestamp).toBeGreaterThan(1_000_000_000_000);
      expect(`${block}\n\n`).toBe(encodeSse({ ...event, timestamp }));
    });
  });
});
