import { describe, expect, test } from "vitest";
import { outputMessage } from "./code-interpreter-output.js";
import { CHART_MIME, DATA_MIME } from "./code-interpreter-python.js";

describe("cell events as the code interpreter's output lines", () => {
  const now = new Date("2026-01-02T03:04:05.678Z");

  test("output, execution counts and errors", () => {
    expect(outputMessage({ type: "stdout", text: "hi\n" }, now)).toEqual({
      type: "stdout",
      text: "hi\n",
      timestamp: "2026-01-02T03:04:05.678Z",
    });
    expect(outputMessage({ type: "stderr", text: "oops" }, now)).toMatchObject({
      type: "stderr",
      text: "oops",
    });
    expect(outputMessage({ type: "execution_count", execution_count: 3 })).toEqual({
      type: "number_of_executions",
      execution_count: 3,
    });
    expect(
      outputMessage({
        type: "error",
        error: {
          ename: "NameError",
          evalue: "name 'y' is not defined",
          traceback: ["Cell In[2]", "----> 1 y"],
        },
      }),
    ).toEqual({
      type: "error",
      name: "NameError",
      value: "name 'y' is not defined",
      traceback: "Cell In[2]\n----> 1 y",
    });
  });

  test("results: MIME types as E2B's fields, the rest under extra, main or displayed", () => {
    const bundle = {
      "text/plain": "<Figure size 640x480 with 1 Axes>",
      "image/png": "iVBORw0KGgo=",
      "text/html": "<b>x</b>",
      "text/markdown": "*x*",
      "image/svg+xml": "<svg/>",
      "image/jpeg": "/9j/",
      "application/pdf": "JVBERi0=",
      "text/latex": "$x$",
      "application/json": { a: 1 },
      "application/javascript": "alert(1)",
      [DATA_MIME]: { a: [1, 2] },
      [CHART_MIME]: { type: "line", title: "", elements: [] },
      "application/vnd.plotly.v1+json": { data: [] },
    };
    expect(outputMessage({ type: "result", results: bundle, main: false })).toEqual({
      type: "result",
      text: "<Figure size 640x480 with 1 Axes>",
      png: "iVBORw0KGgo=",
      html: "<b>x</b>",
      markdown: "*x*",
      svg: "<svg/>",
      jpeg: "/9j/",
      pdf: "JVBERi0=",
      latex: "$x$",
      json: { a: 1 },
      javascript: "alert(1)",
      data: { a: [1, 2] },
      chart: { type: "line", title: "", elements: [] },
      extra: { "application/vnd.plotly.v1+json": { data: [] } },
      is_main_result: false,
    });
  });

  test("a string's text loses its repr quotes; other text is kept whole", () => {
    const text = (plain: string) =>
      outputMessage({ type: "result", results: { "text/plain": plain }, main: true }).text;
    expect(text("'hello'")).toBe("hello");
    expect(text("'multi\nline'")).toBe("multi\nline");
    expect(text("''")).toBe("");
    expect(text("'")).toBe("'");
    expect(text('"double"')).toBe('"double"');
    expect(text("42")).toBe("42");
    expect(outputMessage({ type: "result", results: { "text/plain": "2" }, main: true })).toEqual({
      type: "result",
      text: "2",
      is_main_result: true,
    });
  });
});
