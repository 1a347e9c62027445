import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Environment } from "../environment.js";
import type { Execd } from "../http/server.js";
import { startExecd } from "../testing.js";

describe("execd uploads", () => {
  let execd: Execd;
  let port: number;

  beforeAll(async () => {
    ({ execd, port } = await startExecd({ env: new Environment({}) }));
  });
  afterAll(() => execd?.close());

  test("an upload cut off midway leaves the file as it was and no partial file behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "execd-upload-"));
    const target = join(dir, "data.txt");
    writeFileSync(target, "the old content");
    const boundary = "cutoff";
    const upload = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/files/upload",
      headers: {
        "x-execd-access-token": "secret",
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
    });
    upload.on("error", () => undefined);
    upload.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify({ path: target })}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n\r\n`,
    );
    upload.write(Buffer.alloc(256 * 1024, "n"));
    // The partial file exists while the upload runs...
    for (let i = 0; i < 100 && readdirSync(dir).length < 2; i++) await sleep(20);
    expect(readdirSync(dir).length).toBe(2);
    // ...and is gone once the sender disappears before the closing boundary.
    upload.destroy();
    for (let i = 0; i < 100 && readdirSync(dir).length > 1; i++) await sleep(20);
    expect(readdirSync(dir)).toEqual(["data.txt"]);
    expect(readFileSync(target, "utf8")).toBe("the old content");
  });
});

describe("execd refuses paths and text it cannot take, with a 400", () => {
  let execd: Execd;
  let base: string;
  const headers = { "x-execd-access-token": "secret" };
  /** Every absolute path these requests name is inside this fresh directory. */
  const scratch = mkdtempSync(join(tmpdir(), "execd-bad-paths-"));

  beforeAll(async () => {
    ({ execd, base } = await startExecd({ env: new Environment({}) }));
  });
  afterAll(() => execd?.close());

  /** Each file route with `P` where its path goes, in the query (escaped as given) or in JSON. */
  const queryRoutes = [
    ["GET", "/files/info?path=P"],
    ["DELETE", "/files?path=P"],
    ["GET", "/files/search?path=P"],
    ["GET", "/files/download?path=P"],
    ["GET", "/directories/list?path=P"],
    ["DELETE", "/directories?path=P"],
  ];
  const jsonRoutes: Array<[string, (path: string) => unknown]> = [
    ["/files/permissions", (path) => ({ [path]: { mode: 644 } })],
    ["/files/mv", (path) => [{ src: `${scratch}/absent`, dest: path }]],
    ["/files/mv", (path) => [{ src: path, dest: `${scratch}/moved` }]],
    ["/files/replace", (path) => ({ [path]: { old: "a", new: "b" } })],
    ["/directories", (path) => ({ [path]: { mode: 755 } })],
  ];
  const queryValues = [
    "relative.txt",
    "",
    `${encodeURIComponent(scratch)}%2Fa%00b`,
    "%FF",
    `${encodeURIComponent(scratch)}%2F%ED%A0%80`,
    "%C3",
  ];
  // JSON texts as sent: a relative path, an empty one, a NUL, a lone surrogate escape.
  const jsonValues = ['"relative.txt"', '""', `"${scratch}/a\\u0000b"`, `"${scratch}/\\ud800"`];

  const answer = async (method: string, path: string, body?: string | Buffer, type = "application/json") => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": type }) },
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return { status: response.status, code: (JSON.parse(text) as { code: unknown }).code, text };
  };

  test("every file route taking its path in the query", async () => {
    const answers = [];
    for (const [method, route] of queryRoutes)
      for (const value of queryValues)
        answers.push([
          method,
          route,
          value,
          await answer(method as string, (route as string).replace("P", value)),
        ]);
    expect(answers).toEqual(
      answers.map(([method, route, value]) => [
        method,
        route,
        value,
        expect.objectContaining({ status: 400, code: "invalid_request" }),
      ]),
    );
  });

  test("every file route taking its path in JSON, and JSON bytes that are not UTF-8", async () => {
    const answers = [];
    for (const [route, body] of jsonRoutes) {
      for (const value of jsonValues) {
        const text = JSON.stringify(body("@")).replace('"@"', value);
        answers.push([route, value, await answer("POST", route, text)]);
      }
      const raw = Buffer.concat([
        Buffer.from(JSON.stringify(body(`${scratch}/@`)).split("@")[0] as string),
        Buffer.from([0xff]),
        Buffer.from(JSON.stringify(body(`${scratch}/@`)).split("@")[1] as string),
      ]);
      answers.push([route, "0xFF byte", await answer("POST", route, raw)]);
    }
    expect(answers).toEqual(
      answers.map(([route, value]) => [
        route,
        value,
        expect.objectContaining({ status: 400, code: "invalid_request" }),
      ]),
    );
  });

  test("an upload's metadata path, a command, an id in the path: all a 400", async () => {
    const upload = (metadata: Buffer) =>
      answer(
        "POST",
        "/files/upload",
        Buffer.concat([
          Buffer.from('--b\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n'),
          metadata,
          Buffer.from(
            '\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nx\r\n--b--\r\n',
          ),
        ]),
        "multipart/form-data; boundary=b",
      );
    const answers = [
      await upload(Buffer.from('{"path":"relative.txt"}')),
      await upload(Buffer.from(`{"path":"${scratch}/\\ud800"}`)),
      await upload(Buffer.from([...Buffer.from(`{"path":"${scratch}/`), 0xff, ...Buffer.from('"}')])),
      await answer("POST", "/command", '{"command":"echo \\ud800"}'),
      await answer("POST", "/command", '{"command":"true","envs":{"A":"\\udc00"}}'),
      await answer("GET", "/command/status/%FF"),
      await answer("GET", "/command/status/%ED%A0%80"),
    ];
    expect(answers).toEqual(
      answers.map(() => expect.objectContaining({ status: 400, code: "invalid_request" })),
    );
  });

  test("relative, empty and NUL paths never reach the file system: nothing is made or moved", async () => {
    const dir = mkdtempSync(join(tmpdir(), "execd-paths-"));
    writeFileSync(join(dir, "kept.txt"), "kept");
    const moved = await answer(
      "POST",
      "/files/mv",
      JSON.stringify([{ src: join(dir, "kept.txt"), dest: "moved.txt" }]),
    );
    expect(moved.status).toBe(400);
    expect(readdirSync(dir)).toEqual(["kept.txt"]);
  });
});
