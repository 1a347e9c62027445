import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Environment } from "../environment.js";
import { startExecd } from "../testing.js";
import type { Execd } from "./server.js";

describe("execd's HTTP surface", () => {
  let execd: Execd;
  let base: string;

  beforeAll(async () => {
    ({ execd, base } = await startExecd({ env: new Environment({}) }));
  });
  afterAll(() => execd?.close());

  test("answers, errors included, carry the caller's X-Request-ID back", async () => {
    const id = "req-4f1c2a";
    const cases: Array<[string, RequestInit, number]> = [
      ["/ping", { headers: { "X-Request-ID": id } }, 401],
      ["/nowhere", { headers: { "X-Request-ID": id, "X-EXECD-ACCESS-TOKEN": "secret" } }, 404],
      [
        "/command",
        { method: "POST", body: "{oops", headers: { "X-Request-ID": id, "X-EXECD-ACCESS-TOKEN": "secret" } },
        400,
      ],
      ["/ping", { headers: { "X-Request-ID": id, "X-EXECD-ACCESS-TOKEN": "secret" } }, 200],
    ];
    for (const [path, init, status] of cases) {
      const response = await fetch(`${base}${path}`, init);
      expect(response.status, path).toBe(status);
      expect(response.headers.get("x-request-id"), path).toBe(id);
    }
    const without = await fetch(`${base}/nowhere`);
    expect(without.headers.get("x-request-id")).toBeNull();
    const unreasonable = await fetch(`${base}/nowhere`, { headers: { "X-Request-ID": "x".repeat(500) } });
    expect(unreasonable.headers.get("x-request-id")).toBeNull();
  });
});
