import { Writable } from "node:stream";
import { createLogger } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

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
    ];
    const answers: string[] = [];
    for (const path of paths) {
      const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await response.json()) as { code: string; detail: string };
      answers.push(`${path} ${response.status} ${body.code}`);
    }
    expect(answers).toEqual(paths.map((path) => `${path} 400 invalid_request`));
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
