import { describe, expect, test } from "vitest";
import { newMessage } from "./jupyter-wire.js";
import { kernelEvent, replyError, tracebackLines } from "./kernel-events.js";

const message = (type: string, content: Record<string, unknown>) => newMessage(type, "s", content);

describe("kernel messages as cell events", () => {
  test("execute_input, streams and rich results", () => {
    expect(kernelEvent(message("execute_input", { code: "1", execution_count: 3 }))).toEqual({
      type: "execution_count",
      execution_count: 3,
    });
    expect(kernelEvent(message("stream", { name: "stdout", text: "hi\n" }))).toEqual({
      type: "stdout",
      text: "hi\n",
    });
    expect(kernelEvent(message("stream", { name: "stderr", text: "oops" }))).toEqual({
      type: "stderr",
      text: "oops",
    });
    const data = { "text/plain": "<Figure>", "image/png": "iVBOR" };
    expect(kernelEvent(message("display_data", { data, metadata: {} }))).toEqual({
      type: "result",
      results: data,
      main: false,
    });
    expect(kernelEvent(message("execute_result", { data, execution_count: 1 }))).toEqual({
      type: "result",
      results: data,
      main: true,
    });
  });

  test("errors carry plain-text traceback lines", () => {
    const event = kernelEvent(
      message("error", {
        ename: "ZeroDivisionError",
        evalue: "division by zero",
        traceback: [
          "\u001b[0;31m-----\u001b[0m",
          "Cell In [1], line 1\n\u001b[0;32m----> 1\u001b[0m 1/0\n",
          "",
        ],
      }),
    );
    expect(event).toEqual({
      type: "error",
      error: {
        ename: "ZeroDivisionError",
        evalue: "division by zero",
        traceback: ["-----", "Cell In [1], line 1", "----> 1 1/0"],
      },
    });
  });

  test("status and other messages are not events", () => {
    expect(kernelEvent(message("status", { execution_state: "busy" }))).toBeUndefined();
    expect(kernelEvent(message("clear_output", { wait: false }))).toBeUndefined();
  });

  test("error and aborted replies", () => {
    expect(replyError({ status: "error", ename: "KeyboardInterrupt", evalue: "", traceback: ["x"] })).toEqual(
      {
        type: "error",
        error: { ename: "KeyboardInterrupt", evalue: "", traceback: ["x"] },
      },
    );
    expect(replyError({ status: "aborted" })).toMatchObject({ error: { ename: "ExecutionAborted" } });
    expect(tracebackLines(undefined)).toEqual([]);
  });
});
