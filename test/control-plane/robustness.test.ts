import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, EXECD_PORT, EXECD_TOKEN_HEADER } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

/** Sends raw HTTP/1.1 bytes and reads the answer until the server ends the connection. */
function rawRequest(
  url: string,
  request: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => undefined); // the server may reset once it has answered
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const body = text.slice(text.indexOf("\r\n\r\n") + 4);
      try {
        resolve({ status, body: JSON.parse(body) as Record<string, unknown> });
      } catch {
        reject(new Error(`not a JSON answer: ${text.slice(0, 300)}`));
      }
    });
    socket.end(request);
  });
}

describe("control plane robustness", () => {
  let t: TestServer;
  let token: string;
  let sandboxId: string;

  beforeAll(async () => {
    t = await startTestServer();
    token = await t.account("fuzz@example.com");
    const json = { "content-type": "application/json" };
    sandboxId = (
      (await (
        await fetch(`${t.url}/sandboxes`, {
          method: "POST",
          headers: { ...json, authorization: `Bearer ${token}` },
          body: '{"template":"ubuntu"}',
        })
      ).json()) as { id: string }
    ).id;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("random bodies, ids and headers on every route never produce a 5xx", async () => {
    const routes = [
      ["POST", "/auth/signup"],
      ["POST", "/auth/login"],
      ["GET", "/auth/me"],
      ["POST", "/keys"],
      ["DELETE", "/keys/{id}"],
      ["POST", "/keys/{id}/rotate"],
      ["GET", "/sandboxes?state={text}&metadata={text}"],
      ["GET", "/sandboxes/{id}"],
      ["POST", "/sandboxes/{id}/renew"],
      ["PATCH", "/sandboxes/{id}/metadata"],
      ["POST", "/sandboxes/{id}/run"],
      ["POST", "/sandboxes/{id}/files/read"],
      ["POST", "/sandboxes/{id}/files/write"],
      ["POST", "/sandboxes/{id}/files/move"],
      ["POST", "/sandboxes/{id}/files/search"],
      ["GET", "/sandboxes/{id}/files/list?path={text}&depth={text}"],
      ["DELETE", "/sandboxes/{id}/files?path={text}"],
      ["POST", "/sandboxes/{id}/directories"],
      ["POST", "/sandboxes/{id}/code"],
      ["GET", "/sandboxes/{id}/endpoints/{text}"],
      ["GET", "/e/{text}/x"],
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.jsonValue({ maxDepth: 3 }),
        fc.oneof(fc.string({ maxLength: 30 }), fc.constant(sandboxId)),
        fc.string({ maxLength: 20 }),
        fc.oneof(fc.constant(`Bearer ${token}`), fc.string({ maxLength: 40 }), fc.constant(undefined)),
        fc.constantFrom(
          "application/json",
          "text/plain",
          "application/octet-stream",
          "multipart/form-data",
          "",
        ),
        async ([method, template], body, id, text, authorization, contentType) => {
          const path = template
            .replace("{id}", encodeURIComponent(id) || "x")
            .replaceAll("{text}", encodeURIComponent(text));
          const response = await fetch(`${t.url}${path}`, {
            method,
            headers: {
              ...(authorization ? { authorization } : {}),
              ...(contentType ? { "content-type": contentType } : {}),
            },
            ...(method === "GET" || method === "DELETE" ? {} : { body: JSON.stringify(body) }),
          });
          await response.arrayBuffer();
          expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        },
      ),
      { numRuns: 400 },
    );
  });

  test("numbers in query strings are bounded integers: out of range is a 400, never a database error", async () => {
    const paths = [
      "/memory?page=1e99",
      "/memory?page=9007199254740993",
      "/memory?pageSize=1e99",
      "/memory?page=1.5",
      "/memory/search?q=x&limit=1e99",
      "/usage/sandboxes?page=1e99",
      "/usage/sandboxes?page=99999999999",
      "/usage/sandboxes?pageSize=-1",
      "/sandboxes?page=1e99",
      "/audit?limit=1e99",
      "/audit?cursor=1e99",
      "/audit?cursor=99999999999999999999",
    ];
    const answers: string[] = [];
    for (const path of paths) {
      const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await response.json()) as { code: string; detail: string };
      answers.push(`${path} ${response.status} ${body.code}`);
    }
    expect(answers).toEqual(paths.map((path) => `${path} 400 invalid_request`));
  });

  test("framework-level refusals answer in each surface's own error shape", async () => {
    const surfaces = [
      { prefix: "", text: "detail", auth: `authorization: Bearer ${token}` },
      { prefix: "/v1", text: "message", auth: `RUNTIME-API-KEY: ${t.apiKey}` },
    ];
    const answers: string[] = [];
    const record = (name: string, status: number, body: Record<string, unknown>) =>
      answers.push(`${name} ${status} ${body.code} ${Object.keys(body).sort().join(",")}`);
    const expected: string[] = [];
    for (const { prefix, text, auth } of surfaces) {
      const keys = ["code", text].sort().join(",");
      const host = `host: ${new URL(t.url).host}`;
      // A path parameter past the router's limit, and a URL past the header limit.
      const longId = await fetch(`${t.url}${prefix}/sandboxes/${"x".repeat(200)}`, {
        headers: { authorization: `Bearer ${token}`, "RUNTIME-API-KEY": t.apiKey },
      });
      record(`${prefix} long parameter`, longId.status, (await longId.json()) as Record<string, unknown>);
      expected.push(`${prefix} long parameter 414 uri_too_long ${keys}`);
      const longUrl = await rawRequest(
        t.url,
        `GET ${prefix}/sandboxes?state=${"x".repeat(20_000)} HTTP/1.1\r\n${host}\r\n${auth}\r\n\r\n`,
      );
      record(`${prefix} long URL`, longUrl.status, longUrl.body);
      expected.push(`${prefix} long URL 431 headers_too_large ${keys}`);
      const bigHeader = await rawRequest(
        t.url,
        `GET ${prefix}/sandboxes HTTP/1.1\r\n${host}\r\n${auth}\r\nx-big: ${"y".repeat(20_000)}\r\n\r\n`,
      );
      record(`${prefix} large header`, bigHeader.status, bigHeader.body);
      expected.push(`${prefix} large header 431 headers_too_large ${keys}`);
      const bigBody = await fetch(`${t.url}${prefix}/sandboxes`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "RUNTIME-API-KEY": t.apiKey,
          "content-type": "application/json",
        },
        body: JSON.stringify({ env: { BIG: "x".repeat(2 * 1024 * 1024) } }),
      });
      record(`${prefix} large body`, bigBody.status, (await bigBody.json()) as Record<string, unknown>);
      expected.push(`${prefix} large body 413 payload_too_large ${keys}`);
      const nowhere = await fetch(`${t.url}${prefix}/nowhere/at/all`, {
        headers: { authorization: `Bearer ${token}`, "RUNTIME-API-KEY": t.apiKey },
      });
      record(`${prefix} unknown route`, nowhere.status, (await nowhere.json()) as Record<string, unknown>);
      expected.push(`${prefix} unknown route 404 not_found ${keys}`);
      const badUrl = await fetch(`${t.url}${prefix}/sandboxes/%E0%A4%A`, {
        headers: { authorization: `Bearer ${token}`, "RUNTIME-API-KEY": t.apiKey },
      });
      record(`${prefix} bad escape`, badUrl.status, (await badUrl.json()) as Record<string, unknown>);
      expected.push(`${prefix} bad escape 400 invalid_request ${keys}`);
    }
    // execd, inside the sandbox, answers in its own {code, message}.
    const execd = await t.server.stack.sandboxes.target(sandboxId, EXECD_PORT);
    const execdUrl = `http://${execd.host}:${execd.port}`;
    const execdAuth = `${EXECD_TOKEN_HEADER}: ${t.server.stack.sandboxes.tokens(sandboxId).execd}`;
    const execdKeys = "code,message";
    const execdHost = `host: ${execd.host}:${execd.port}`;
    const execdLongUrl = await rawRequest(
      execdUrl,
      `GET /files/info?path=${"x".repeat(20_000)} HTTP/1.1\r\n${execdHost}\r\n${execdAuth}\r\n\r\n`,
    );
    record("execd long URL", execdLongUrl.status, execdLongUrl.body);
    expected.push(`execd long URL 431 headers_too_large ${execdKeys}`);
    const execdBigHeader = await rawRequest(
      execdUrl,
      `GET /ping HTTP/1.1\r\n${execdHost}\r\n${execdAuth}\r\nx-big: ${"y".repeat(20_000)}\r\n\r\n`,
    );
    record("execd large header", execdBigHeader.status, execdBigHeader.body);
    expected.push(`execd large header 431 headers_too_large ${execdKeys}`);
    const execdNowhere = await fetch(`${execdUrl}/nowhere`, {
      headers: { [EXECD_TOKEN_HEADER]: t.server.stack.sandboxes.tokens(sandboxId).execd },
    });
    record(
      "execd unknown route",
      execdNowhere.status,
      (await execdNowhere.json()) as Record<string, unknown>,
    );
    expected.push(`execd unknown route 404 not_found ${execdKeys}`);
    expect(answers).toEqual(expected);
    // The server is still answering after the connections it cut.
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  });

  test("an empty body sent as application/json is no body, on every surface", async () => {
    const json = { "content-type": "application/json" };
    const bearer = (secret: string) => ({ ...json, authorization: `Bearer ${secret}` });
    const session = await t.account("empty-body@example.com");
    const key = (await (
      await fetch(`${t.url}/keys`, { method: "POST", headers: bearer(session), body: "{}" })
    ).json()) as { key: { id: string } };
    const created = (await (
      await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({ image: { uri: "paddock/base:bookworm" }, entrypoint: ["sleep", "infinity"] }),
      })
    ).json()) as { id: string };
    // A sandbox of its own to pause, so the other tests keep a Running one.
    const owned = (await (
      await fetch(`${t.url}/sandboxes`, {
        method: "POST",
        headers: bearer(token),
        body: '{"template":"ubuntu"}',
      })
    ).json()) as { id: string };
    const calls: Array<[string, string, Record<string, string>, number]> = [
      ["POST", `/keys/${key.key.id}/rotate`, bearer(session), 200],
      ["DELETE", `/keys/${key.key.id}`, bearer(session), 204],
      ["POST", `/sandboxes/${owned.id}/pause`, bearer(token), 200],
      ["POST", `/v1/sandboxes/${created.id}/pause`, { ...json, "RUNTIME-API-KEY": t.apiKey }, 202],
      ["DELETE", `/v1/sandboxes/${created.id}`, { ...json, "RUNTIME-API-KEY": t.apiKey }, 204],
      ["POST", "/auth/logout", bearer(session), 204],
    ];
    const answers: string[] = [];
    for (const [method, path, headers, status] of calls) {
      const response = await fetch(`${t.url}${path}`, { method, headers, body: "" });
      const text = await response.text();
      answers.push(`${method} ${path} ${response.status === status ? "ok" : `${response.status} ${text}`}`);
    }
    expect(answers).toEqual(calls.map(([method, path]) => `${method} ${path} ok`));
    await t.server.stack.sandboxes.delete(owned.id);
    // A body that is there but is not JSON is still refused.
    const broken = await fetch(`${t.url}/keys`, { method: "POST", headers: bearer(token), body: "{" });
    expect([broken.status, ((await broken.json()) as { code: string }).code]).toEqual([400, "invalid_json"]);
  });

  test("a NUL in a path or a command is refused on every route that takes one", async () => {
    const nul = "/tmp/a\u0000b";
    const q = encodeURIComponent(nul);
    const base = `/sandboxes/${sandboxId}`;
    const octets = { "content-type": "application/octet-stream" };
    // [method, path, JSON body or raw bytes, extra headers, expected code]
    const cases: Array<[string, string, unknown, Record<string, string>, string]> = [
      ["POST", `${base}/files/read`, { path: nul }, {}, "invalid_path"],
      ["POST", `${base}/files/write`, { path: nul, content: "x" }, {}, "invalid_path"],
      ["POST", `${base}/files/write?path=${q}`, "raw", octets, "invalid_path"],
      ["POST", `${base}/files/upload?path=${q}`, "raw", octets, "invalid_path"],
      ["GET", `${base}/files/download?path=${q}`, undefined, {}, "invalid_path"],
      ["POST", `${base}/files/move`, { from: nul, to: "/tmp/x" }, {}, "invalid_path"],
      ["POST", `${base}/files/move`, { from: "/tmp/x", to: nul }, {}, "invalid_path"],
      ["POST", `${base}/files/search`, { path: nul }, {}, "invalid_path"],
      ["GET", `${base}/files/list?path=${q}`, undefined, {}, "invalid_path"],
      ["DELETE", `${base}/files?path=${q}`, undefined, {}, "invalid_path"],
      ["DELETE", `${base}/files?path=${q}&recursive=true`, undefined, {}, "invalid_path"],
      ["POST", `${base}/directories`, { path: nul }, {}, "invalid_path"],
      ["POST", `${base}/run`, { command: "echo a\u0000b" }, {}, "invalid_command"],
      ["POST", `${base}/run/stream`, { command: "echo a\u0000b" }, {}, "invalid_command"],
      ["POST", `${base}/run`, { command: "pwd", cwd: nul }, {}, "invalid_path"],
      ["POST", `${base}/run/stream`, { command: "pwd", cwd: nul }, {}, "invalid_path"],
    ];
    const answers: string[] = [];
    for (const [method, path, body, headers, code] of cases) {
      const response = await fetch(`${t.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && body !== "raw" ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        ...(body === "raw" ? { body: "bytes" } : body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      const answer = (text.startsWith("{") ? JSON.parse(text) : { code: text }) as { code: string };
      answers.push(`${method} ${path} ${JSON.stringify(body)} ${response.status} ${answer.code}`);
      expect(code).toMatch(/^invalid_/);
    }
    expect(answers).toEqual(
      cases.map(([method, path, body, , code]) => `${method} ${path} ${JSON.stringify(body)} 400 ${code}`),
    );
  });

  test("a relative path, or text that is not Unicode, is a 400 on every route that takes one", async () => {
    const base = `/sandboxes/${sandboxId}`;
    const json = { "content-type": "application/json" };
    const octets = { "content-type": "application/octet-stream" };
    /** A JSON body with `"P"` standing for a path, as text or bytes, and its replacement. */
    const body = (template: string, value: string | Buffer) => {
      const [head = "", tail = ""] = template.split('"P"');
      return Buffer.concat([Buffer.from(head), Buffer.from(value), Buffer.from(tail)]);
    };
    const jsonRoutes: Array<[string, string]> = [
      [`${base}/files/read`, '{"path":"P"}'],
      [`${base}/files/write`, '{"path":"P","content":"x"}'],
      [`${base}/files/move`, '{"from":"P","to":"/tmp/moved"}'],
      [`${base}/files/move`, '{"from":"/tmp/absent","to":"P"}'],
      [`${base}/files/search`, '{"path":"P"}'],
      [`${base}/directories`, '{"path":"P"}'],
    ];
    const queryRoutes: Array<[string, string, Record<string, string>]> = [
      ["POST", `${base}/files/write?path=P`, octets],
      ["POST", `${base}/files/upload?path=P`, octets],
      ["GET", `${base}/files/download?path=P`, {}],
      ["GET", `${base}/files/list?path=P`, {}],
      ["DELETE", `${base}/files?path=P`, {}],
      ["DELETE", `${base}/files?path=P&recursive=true`, {}],
    ];
    // [method, path, body, headers, expected code]: each hand-written, as a client would send it.
    const cases: Array<[string, string, Buffer | undefined, Record<string, string>, string]> = [
      ...jsonRoutes.flatMap(([path, template]): typeof cases => [
        ["POST", path, body(template, '"relative.txt"'), json, "invalid_path"],
        ["POST", path, body(template, '"\\ud800"'), json, "invalid_unicode"],
        ["POST", path, body(template, '"/tmp/\\udc00x"'), json, "invalid_unicode"],
        ["POST", path, body(template, Buffer.from([0x22, 0x2f, 0xff, 0x22])), json, "invalid_unicode"],
      ]),
      ...queryRoutes.flatMap(([method, path, headers]): typeof cases => [
        [
          method,
          path.replace("P", "relative.txt"),
          method === "POST" ? Buffer.from("x") : undefined,
          headers,
          "invalid_path",
        ],
        [
          method,
          path.replace("P", "%FF"),
          method === "POST" ? Buffer.from("x") : undefined,
          headers,
          "invalid_unicode",
        ],
        [
          method,
          path.replace("P", "%2Ftmp%2F%ED%A0%80"),
          method === "POST" ? Buffer.from("x") : undefined,
          headers,
          "invalid_unicode",
        ],
      ]),
      ["POST", `${base}/run`, Buffer.from('{"command":"echo \\ud800"}'), json, "invalid_unicode"],
      ["POST", `${base}/run/stream`, Buffer.from('{"command":"echo \\ud800"}'), json, "invalid_unicode"],
      [
        "POST",
        `${base}/run`,
        Buffer.from('{"command":"true","env":{"A":"\\udc00"}}'),
        json,
        "invalid_unicode",
      ],
      ["POST", `${base}/run`, Buffer.from('{"command":"pwd","cwd":"/\\ud800"}'), json, "invalid_unicode"],
      ["POST", `${base}/code`, Buffer.from('{"code":"print(\'\\ud800\')"}'), json, "invalid_unicode"],
      [
        "POST",
        "/sandboxes",
        Buffer.from('{"template":"ubuntu","metadata":{"k":"\\ud800"}}'),
        json,
        "invalid_unicode",
      ],
      ["PATCH", `${base}/metadata`, Buffer.from('{"\\ud800":"v"}'), json, "invalid_unicode"],
      ["POST", "/memory", Buffer.from('{"content":"\\ud800"}'), json, "invalid_unicode"],
      ["GET", "/sandboxes?metadata=k%3D%FF", undefined, {}, "invalid_unicode"],
    ];
    const answers: string[] = [];
    for (const [method, path, sent, headers] of cases) {
      const response = await fetch(`${t.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...headers },
        ...(sent ? { body: sent } : {}),
      });
      const text = await response.text();
      const answer = (text.startsWith("{") ? JSON.parse(text) : { code: text }) as { code: string };
      answers.push(`${method} ${path} ${sent?.toString("latin1")} ${response.status} ${answer.code}`);
    }
    expect(answers).toEqual(
      cases.map(
        ([method, path, sent, , code]) => `${method} ${path} ${sent?.toString("latin1")} 400 ${code}`,
      ),
    );
  });

  test("U+202E and U+FEFF are ordinary filename characters on every route", async () => {
    const call = async (method: string, path: string, body?: unknown, raw?: string) => {
      const response = await fetch(`${t.url}/sandboxes/${sandboxId}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(raw !== undefined
            ? { "content-type": "application/octet-stream" }
            : body !== undefined
              ? { "content-type": "application/json" }
              : {}),
        },
        ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      expect(response.status, `${method} ${path} ${text}`).toBeLessThan(300);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    const dir = "/tmp/odd-\u202Edir";
    const rtl = `${dir}/invoice-\u202Efdp.exe`;
    const bom = `${dir}/\uFEFFbom.txt`;
    const q = encodeURIComponent;
    await call("POST", "/directories", { path: dir });
    await call("POST", "/files/write", { path: rtl, content: "right to left" });
    expect((await call("POST", "/files/read", { path: rtl })).content).toBe("right to left");
    await call("POST", `/files/upload?path=${q(bom)}`, undefined, "byte order");
    await call("POST", `/files/write?path=${q(`${bom}.2`)}`, undefined, "raw write");
    const download = await fetch(`${t.url}/sandboxes/${sandboxId}/files/download?path=${q(bom)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await download.text()).toBe("byte order");
    const listed = (await call("GET", `/files/list?path=${q(dir)}`)).items as Array<{ path: string }>;
    expect(listed.map((item) => item.path).sort()).toEqual([bom, `${bom}.2`, rtl].sort());
    const found = (await call("POST", "/files/search", { path: dir, pattern: "*bom*" })).items as Array<{
      path: string;
    }>;
    expect(found.map((item) => item.path).sort()).toEqual([bom, `${bom}.2`].sort());
    await call("POST", "/files/move", { from: rtl, to: `${rtl}.moved` });
    const run = await call("POST", "/run", { command: `cat '${bom}' && echo && LC_ALL=C ls`, cwd: dir });
    expect(run.stdout).toBe(`byte order\ninvoice-\u202Efdp.exe.moved\n\uFEFFbom.txt\n\uFEFFbom.txt.2\n`);
    await call("DELETE", `/files?path=${q(`${rtl}.moved`)}`);
    await call("DELETE", `/files?path=${q(dir)}&recursive=true`);
    expect(
      (await call("POST", "/run", { command: `test -e '${dir}' && echo there || echo gone` })).stdout,
    ).toBe("gone\n");
  });

  test("execd's own refusals keep their code: a busy code context is 409 context_busy, an unknown one 404 context_not_found", async () => {
    const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
    const python = (await (
      await fetch(`${t.url}/sandboxes`, { method: "POST", headers, body: '{"template":"python"}' })
    ).json()) as { id: string };
    const context = (await (
      await fetch(`${t.url}/sandboxes/${python.id}/code/contexts`, {
        method: "POST",
        headers,
        body: '{"language":"python"}',
      })
    ).json()) as { id: string };
    const run = (code: string) =>
      fetch(`${t.url}/sandboxes/${python.id}/code`, {
        method: "POST",
        headers,
        body: JSON.stringify({ code, contextId: context.id }),
      });
    const slow = run("import time\ntime.sleep(4)\nprint('slept')");
    // Give the first run time to reach the kernel, then ask the same context again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const busy = await run("print('second')");
    const answer = (await busy.json()) as { code: string; detail: string };
    expect([busy.status, answer.code]).toEqual([409, "context_busy"]);
    expect(answer.detail).toContain(context.id);
    expect(((await (await slow).json()) as { stdout: string }).stdout).toBe("slept\n");
    // An unknown context is not a missing file.
    const unknown = await fetch(`${t.url}/sandboxes/${python.id}/code`, {
      method: "POST",
      headers,
      body: JSON.stringify({ code: "1", contextId: "no-such-context" }),
    });
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([
      404,
      "context_not_found",
    ]);
    await fetch(`${t.url}/sandboxes/${python.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
  });

  test("passwords, keys and tokens never reach the log, even at trace level", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const audited = await startTestServer({
      logger: createLogger({ level: "trace", name: "audit", destination }),
    });
    try {
      const json = { "content-type": "application/json" };
      const password = "a very secret passphrase";
      await fetch(`${audited.url}/auth/signup`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ email: "log@example.com", password }),
      });
      const session = (await (
        await fetch(`${audited.url}/auth/login`, {
          method: "POST",
          headers: json,
          body: JSON.stringify({ email: "log@example.com", password }),
        })
      ).json()) as { token: string };
      const key = (await (
        await fetch(`${audited.url}/keys`, {
          method: "POST",
          headers: { ...json, authorization: `Bearer ${session.token}` },
          body: "{}",
        })
      ).json()) as {
        secret: string;
      };
      await fetch(`${audited.url}/sandboxes`, { headers: { authorization: `Bearer ${key.secret}` } });
      await fetch(`${audited.url}/v1/sandboxes`, { headers: { "RUNTIME-API-KEY": audited.apiKey } });
      await fetch(`${audited.url}/sandboxes`, {
        headers: { authorization: "Bearer pk_wrong_key_logged_as_failure" },
      });
      const text = lines.join("");
      expect(text.length).toBeGreaterThan(0);
      for (const secret of [password, session.token, key.secret, audited.apiKey])
        expect(text).not.toContain(secret);
    } finally {
      await audited.dispose();
    }
  });
});

describe("a sandbox killed for memory while it runs a command", () => {
  let t: TestServer;
  let token: string;
  const templatesDir = mkdtempSync(join(tmpdir(), "paddock-tiny-"));
  mkdirSync(join(templatesDir, "tiny"));
  writeFileSync(
    join(templatesDir, "tiny", "template.toml"),
    'id = "tiny"\nname = "Tiny"\ndescription = "64 MiB"\nimage = "paddock/template-ubuntu:latest"\n[resources]\nmemory = "64Mi"\n',
  );

  beforeAll(async () => {
    t = await startTestServer({ config: { templates: { dir: templatesDir } } });
    token = await t.account("oom@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("answers the command with 409 sandbox_oom_killed, and the sandbox is Failed with that reason", async () => {
    const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
    const sandbox = (await (
      await fetch(`${t.url}/sandboxes`, { method: "POST", headers, body: '{"template":"tiny"}' })
    ).json()) as { id: string };
    // Holds all of /dev/zero's bytes in one line: far past the sandbox's 64 MiB.
    const hog = await fetch(`${t.url}/sandboxes/${sandbox.id}/run`, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: "head -c 256M /dev/zero | tail >/dev/null; echo survived" }),
    });
    const text = await hog.text();
    expect([hog.status, text]).toEqual([409, expect.stringContaining('"code":"sandbox_oom_killed"')]);
    await expect
      .poll(
        async () =>
          (await (await fetch(`${t.url}/sandboxes/${sandbox.id}`, { headers })).json()) as {
            state: string;
          },
        { timeout: 30_000 },
      )
      .toMatchObject({ state: "Failed" });
    // The next command on it gets the same clear answer, not a 5xx.
    const next = await fetch(`${t.url}/sandboxes/${sandbox.id}/run`, {
      method: "POST",
      headers,
      body: '{"command":"true"}',
    });
    expect([next.status, ((await next.json()) as { code: string }).code]).toEqual([
      409,
      "sandbox_oom_killed",
    ]);
  });
});
