import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Environment } from "../environment.js";
import type { Execd } from "../http/server.js";
import { startExecd } from "../testing.js";

describe("envd refuses text that is not Unicode with a 400, in its own shapes", () => {
  let execd: Execd;
  let base: string;
  const scratch = mkdtempSync(join(tmpdir(), "envd-bad-input-"));

  beforeAll(async () => {
    ({ execd, base } = await startExecd({ env: new Environment({}) }));
  });
  afterAll(() => execd?.close());

  const answer = async (method: string, path: string, body?: string | Buffer, type = "application/json") => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "x-execd-access-token": "secret", ...(body === undefined ? {} : { "content-type": type }) },
      ...(body === undefined ? {} : { body }),
    });
    return { status: response.status, code: ((await response.json()) as { code: unknown }).code };
  };

  test("its /files routes answer {code: 400}, its RPCs invalid_argument", async () => {
    const answers = [
      await answer("GET", "/e2b/envd/files?path=%FF"),
      await answer("GET", "/e2b/envd/files?path=%ED%A0%80"),
      await answer("POST", "/e2b/envd/files?path=%FF", Buffer.from("x"), "application/octet-stream"),
    ];
    expect(answers).toEqual(answers.map(() => expect.objectContaining({ status: 400, code: 400 })));
    const rpc = await answer("POST", "/e2b/envd/filesystem.Filesystem/Stat", `{"path":"${scratch}/\\ud800"}`);
    expect([rpc.status, rpc.code]).toEqual([400, "invalid_argument"]);
    const bytes = await answer(
      "POST",
      "/e2b/envd/filesystem.Filesystem/Stat",
      Buffer.from([...Buffer.from(`{"path":"${scratch}/`), 0xff, ...Buffer.from('"}')]),
    );
    expect([bytes.status, bytes.code]).toEqual([400, "invalid_argument"]);
  });
});
