import { EXECD_OUTPUT_FRAMING_HEADER } from "@paddock/common/contracts";
import { encodeSse, SseParser } from "@paddock/common/sse";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Execd } from "../http/server.js";
import { startExecd, testToken } from "../testing.js";
import { longestLine } from "./output-framing.js";

/**
 * A command's output as `POST /command` (and a session's run) streams it, in process: the bytes
 * the command writes become events of whole characters however its pipe's reads cut them.
 */
describe("a command's output events", () => {
  let execd: Execd;
  let base: string;

  beforeAll(async () => {
    ({ execd, base } = await startExecd());
  });
  afterAll(() => execd?.close());

  /** The raw event stream of `command`, and its output events' texts. */
  async function run(command: string, framing?: "chunks") {
    const response = await fetch(`${base}/command`, {
      method: "POST",
      headers: {
        "x-execd-access-token": testToken,
        "content-type": "application/json",
        ...(framing ? { [EXECD_OUTPUT_FRAMING_HEADER]: framing } : {}),
      },
      body: JSON.stringify({ command }),
    });
    const raw = await response.text();
    const events = new SseParser().push(raw);
    const output = events.filter((event) => event.type === "stdout").map((event) => event.text as string);
    return { raw, events, output };
  }

  /** Writes the bytes of "€" (e2 82 ac) in two writes, the pipe read between them. */
  const splitEuro = "printf 'a\\342\\202'; sleep 0.3; printf '\\254b\\n'";

  test("a character split across two pipe reads arrives whole, in lines and in chunks", async () => {
    expect((await run(splitEuro)).output).toEqual(["a€b"]);
    expect((await run(splitEuro, "chunks")).output.join("")).toBe("a€b\n");
  });

  test("in a session's run too, on stdout and stderr", async () => {
    const headers = { "x-execd-access-token": testToken, "content-type": "application/json" };
    const opened = await fetch(`${base}/session`, { method: "POST", headers, body: "{}" });
    const { session_id } = (await opened.json()) as { session_id: string };
    const response = await fetch(`${base}/session/${session_id}/run`, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: `${splitEuro}; { ${splitEuro}; } >&2` }),
    });
    const events = new SseParser().push(await response.text());
    const texts = (type: string) => events.filter((event) => event.type === type).map((event) => event.text);
    expect(texts("stdout")).toEqual(["a€b"]);
    expect(texts("stderr")).toEqual(["a€b"]);
  });

  test("a long line of multi-byte characters goes out in pieces of at most 1 MiB of whole characters", async () => {
    // 3 MiB of "é" (2 bytes each) after one plain byte, without a newline.
    const { output } = await run(
      `printf x; head -c ${3 * 2 ** 20} /dev/zero | sed 's/\\x0/é/g' | tr -d '\\n'`,
    );
    expect(output.length).toBeGreaterThan(3);
    for (const piece of output) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(longestLine);
      expect(piece).not.toContain("\ufffd");
    }
    expect(output.join("")).toBe(`x${"é".repeat(3 * 2 ** 20)}`);
  });

  test("each output event is encodeSse's of its text: escapes, invalid bytes and all", async () => {
    const { raw, events, output } = await run("printf 'q\"\\\\\\t\\033[1m\\377\\300\\nplain\\n'");
    expect(output).toEqual(['q"\\\t\u001b[1m\ufffd\ufffd', "plain"]);
    for (const event of events.filter((each) => each.type === "stdout")) {
      expect(raw).toContain(encodeSse({ type: "stdout", text: event.text }, event.timestamp as number));
    }
  });
});
