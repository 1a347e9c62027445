import { PaddockError } from "@paddock/common/errors";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Environment } from "../environment.js";
import { parseSessionSpec } from "../isolated/spec.js";
import { startExecd } from "../testing.js";
import type { Execd } from "./server.js";

/** [method, path, body (undefined: none), expected message] */
type Case = [string, string, unknown, string];

describe("execd's refusals name the part, the JSON path and the property", () => {
  let execd: Execd;
  let base: string;

  beforeAll(async () => {
    ({ execd, base } = await startExecd({ env: new Environment({}) }));
  });
  afterAll(() => execd?.close());

  const cases: Case[] = [
    ["POST", "/command", { cmd: "true" }, 'body: missing required property "command"'],
    ["POST", "/command", { command: ["true"] }, "body.command: must be string"],
    ["POST", "/command", { command: "true", timeout: 0 }, "body.timeout: must be integer >= 1"],
    ["POST", "/command", { command: "true", envs: { A: 1 } }, "body.envs: must be an object of strings"],
    ["POST", "/command", { command: "true", background: "yes" }, "body.background: must be boolean"],
    ["POST", "/command", { command: "true", gid: 5 }, "body.gid: needs uid too"],
    ["POST", "/command", [], "body: must be a JSON object"],
    ["POST", "/session", { cwd: 5 }, "body.cwd: must be string"],
    ["POST", "/code", { language: "python" }, 'body: missing required property "code"'],
    [
      "POST",
      "/code/context",
      { language: "pyhton" },
      'body.language: must be one of "python", "javascript", "typescript", "bash"; did you mean "python"?',
    ],
    [
      "DELETE",
      "/code/contexts?language=javscript",
      undefined,
      'query.language: must be one of "python", "javascript", "typescript", "bash"; did you mean "javascript"?',
    ],
    ["GET", "/files/info", undefined, 'query: missing required property "path"'],
    [
      "GET",
      "/files/info?path=notes.txt",
      undefined,
      'query.path: must be an absolute path (starting with /), not "notes.txt"',
    ],
    [
      "POST",
      "/files/mv",
      [{ src: "/tmp/a", dest: "b" }],
      'body[0].dest: must be an absolute path (starting with /), not "b"',
    ],
    ["POST", "/files/mv", [{ src: "/tmp/a", destination: "/tmp/b" }], "body[0]: needs string src and dest"],
    [
      "POST",
      "/files/permissions",
      { "/tmp/x": { mode: "644" } },
      'body["/tmp/x"].mode: must be a number like 644',
    ],
    ["GET", "/directories/list?path=/tmp&depth=0", undefined, "query.depth: must be integer >= 1"],
    ["POST", "/pty", { rows: 20_000 }, "body.rows: must be <= 10000"],
    ["POST", "/paddock/env", { GOOD: "x", BAD: 1 }, "body.BAD: must be string"],
  ];

  test.each(cases)("%s %s %j", async (method, path, body, message) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "X-EXECD-ACCESS-TOKEN": "secret", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { code: "invalid_request", message },
    });
  });

  test.each([
    [{}, 'body: missing required property "workspace"'],
    [
      { workspace: { path: "/w", mode: "RW" } },
      'body.workspace.mode: must be one of "overlay", "ro", "rw"; did you mean "rw"?',
    ],
    [
      { workspace: { path: "/w" }, profile: "strickt" },
      'body.profile: must be one of "strict", "balanced"; did you mean "strict"?',
    ],
    [
      { workspace: { path: "/w" }, binds: [{ source: "tmp" }] },
      "body.binds[0].source: must be an absolute path",
    ],
    [{ workspace: { path: "/w" }, uid: -1 }, "body.uid: must be an unsigned 32-bit integer"],
  ])("an isolated session's spec %j", (body, message) => {
    const refusal = (() => {
      try {
        parseSessionSpec(body);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(PaddockError);
    expect((refusal as PaddockError).message).toBe(message);
  });
});
