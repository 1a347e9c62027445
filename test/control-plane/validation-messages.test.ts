/**
 * A refused request names what is wrong, on every surface of the server: the part of the request,
 * the JSON path and the property, and the known field a close name was meant to be. The error
 * shapes and codes stay each surface's own. Checked over real HTTP and through the published
 * clients that show the message: Paddock's SDK, OpenSandbox's and E2B's.
 */
import { ConnectionConfig, Sandbox as OpenSandbox, SandboxManager } from "@alibaba-group/opensandbox";
import { fieldPath } from "@paddock/common";
import { Sandbox as E2bSandbox } from "e2b";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { InvalidRequestError, Sandbox } from "../../packages/sdk/src/index.js";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import { userConnection } from "../support/user.js";

/** [method, path, body (undefined: none), expected text] */
type Case = [string, string, unknown, string];

let server: E2bServer;
let sessionToken: string;

beforeAll(async () => {
  server = await startE2bServer();
  sessionToken = await server.t.account("validation@example.com");
});
afterAll(async () => {
  await server?.dispose();
});

async function call(method: string, url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the control plane's detail names the path and property", () => {
  const cases: Case[] = [
    [
      "POST",
      "/sandboxes/sbx_none/run",
      { command: "sleep 1", timeout: 60000 },
      'body.timeout: unknown property "timeout"; did you mean "timeoutMs"?',
    ],
    [
      "POST",
      "/sandboxes/sbx_none/run",
      { command: "sleep 1", timeout_ms: 60000 },
      'body.timeout_ms: unknown property "timeout_ms"; did you mean "timeoutMs"?',
    ],
    ["POST", "/sandboxes/sbx_none/run", { timeoutMs: 5 }, 'body: missing required property "command"'],
    ["POST", "/sandboxes/sbx_none/run", { command: "ls", timeoutMs: "5" }, "body.timeoutMs: must be integer"],
    ["POST", "/sandboxes/sbx_none/run", { command: "ls", env: { A: 1 } }, "body.env.A: must be string"],
    [
      "POST",
      "/sandboxes",
      { template: "python", networkPolicy: { default_action: "deny" } },
      'body.networkPolicy.default_action: unknown property "default_action"; did you mean "defaultAction"?',
    ],
    [
      "POST",
      "/sandboxes",
      { template: "python", networkPolicy: { egress: [{ action: "allow", taget: "example.com" }] } },
      'body.networkPolicy.egress[0]: missing required property "target"; did you mean "target" instead of "taget"?',
    ],
    [
      "POST",
      "/sandboxes",
      { template: "python", networkPolicy: { egress: [{ action: "Allow", target: "example.com" }] } },
      'body.networkPolicy.egress[0].action: must be one of "allow", "deny"; did you mean "allow"?',
    ],
    ["GET", "/sandboxes?pageSize=1000", undefined, "query.pageSize: must be <= 200"],
    [
      "POST",
      "/auth/signup",
      { email: "someone at example.com", password: "correct horse battery" },
      'body.email: "someone at example.com" is not an email address',
    ],
    [
      "POST",
      "/auth/signup",
      { email: "short@example.com", password: "short" },
      "body.password: must have at least 8 characters",
    ],
    [
      "GET",
      "/sandboxes?page_size=10",
      undefined,
      'query.page_size: unknown property "page_size"; did you mean "pageSize"?',
    ],
  ];
  test.each(cases)("%s %s %j", async (method, path, body, detail) => {
    const answer = await call(method, `${server.t.url}${path}`, body, {
      authorization: `Bearer ${sessionToken}`,
    });
    expect(answer).toEqual({ status: 400, body: { code: "invalid_request", detail } });
  });
});

describe("the control plane's own checks of paths and commands name the field", () => {
  test.each([
    [
      "POST",
      "/sandboxes/sbx_none/run",
      { command: "ls\u0000" },
      400,
      "invalid_command",
      "body.command: contains a NUL character",
    ],
    [
      "POST",
      "/sandboxes/sbx_none/run",
      { command: "ls", env: { LANG: "C\u0000" } },
      400,
      "invalid_command",
      "body.env.LANG: contains a NUL character",
    ],
    [
      "POST",
      "/sandboxes/sbx_none/run",
      { command: "ls", cwd: "/tmp\u0000" },
      400,
      "invalid_path",
      "body.cwd: contains a NUL character",
    ],
    [
      "POST",
      "/sandboxes/sbx_none/files/move",
      { from: "/tmp/a", to: "b" },
      400,
      "invalid_path",
      'body.to: must be an absolute path (starting with /), not "b"',
    ],
    [
      "GET",
      "/sandboxes/sbx_none/files/download?path=notes.txt",
      undefined,
      400,
      "invalid_path",
      'query.path: must be an absolute path (starting with /), not "notes.txt"',
    ],
  ])("%s %s %j", async (method, path, body, status, code, detail) => {
    const answer = await call(method, `${server.t.url}${path}`, body, {
      authorization: `Bearer ${sessionToken}`,
    });
    expect(answer).toEqual({ status, body: { code, detail } });
  });
});

describe("any unknown property is named at its path", () => {
  const known = ["command", "cwd", "env", "timeoutMs", "background"];
  const name = fc
    .string({ minLength: 1, maxLength: 40 })
    .filter((key) => !known.includes(key) && key !== "__proto__" && key !== "constructor");

  test("in the run request's body, with the field it is close to or none", async () => {
    await fc.assert(
      fc.asyncProperty(name, async (key) => {
        const answer = await call(
          "POST",
          `${server.t.url}/sandboxes/sbx_none/run`,
          { command: "true", [key]: 1 },
          { authorization: `Bearer ${sessionToken}` },
        );
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe("invalid_request");
        const detail = String(answer.body.detail);
        expect(detail.startsWith(`${fieldPath("body", key)}: unknown property ${JSON.stringify(key)}`)).toBe(
          true,
        );
        const meant = /; did you mean "([^"]+)"\?$/.exec(detail)?.[1];
        if (meant !== undefined) expect(known).toContain(meant);
      }),
      { numRuns: 40 },
    );
  });
});

describe("/v1's message names the path and property", () => {
  const image = { uri: "paddock/base:bookworm" };
  const entrypoint = ["sleep", "infinity"];
  const cases: Case[] = [
    [
      "POST",
      "/v1/sandboxes",
      { image: { uri: "x", auth: { userName: "me" } }, entrypoint },
      'body.image.auth.userName: unknown property "userName"; did you mean "username"?',
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, platform: { os: "Linux", arch: "amd64" } },
      'body.platform.os: must be one of "linux", "windows"; did you mean "linux"?',
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, timeout: "soon" },
      "body.timeout: must be integer or null",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, volumes: [{ name: "data", mountPath: "/data", pvc: { claimname: "v" } }] },
      'body.volumes[0].pvc: missing required property "claimName"; did you mean "claimName" instead of "claimname"?',
    ],
    ["GET", "/v1/sandboxes?pageSize=0", undefined, "query.pageSize: must be >= 1"],
    ["GET", "/v1/sandboxes?metadata=%3Dv", undefined, "query.metadata: has an empty key"],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, resourceLimits: { cpu: "lots" } },
      'body.resourceLimits.cpu: "lots" is not a CPU quantity like "500m" or "2"',
    ],
    [
      "POST",
      "/v1/sandboxes",
      {
        image,
        entrypoint,
        volumes: [{ name: "data", host: { path: "/srv" }, mountPath: "/x", subPath: "../a" }],
      },
      "body.volumes[0].subPath: must not contain '..'",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image },
      "body.entrypoint: is required, with at least one item, when image is given",
    ],
    [
      "GET",
      "/v1/sandboxes?page_size=5",
      undefined,
      'query.page_size: unknown property "page_size"; did you mean "pageSize"?',
    ],
    ["GET", "/v1/sandboxes/sbx_none/endpoints/http", undefined, "path.port: must be integer"],
  ];
  test.each(cases)("%s %s %j", async (method, path, body, message) => {
    const answer = await call(method, `${server.t.url}${path}`, body, {
      "OPEN-SANDBOX-API-KEY": server.t.apiKey,
    });
    expect(answer).toEqual({ status: 400, body: { code: "invalid_request", message } });
  });
});

describe("E2B's message names the path and property", () => {
  const cases: Case[] = [
    ["POST", "/e2b/sandboxes", { timeout: 30 }, 'body: missing required property "templateID"'],
    ["POST", "/e2b/sandboxes", { templateID: "base", timeout: "30" }, "body.timeout: must be integer"],
    [
      "POST",
      "/e2b/sandboxes",
      { templateID: "base", network: { allowOut: "x" } },
      "body.network.allowOut: must be array",
    ],
    ["GET", "/e2b/v2/sandboxes?limit=1000", undefined, "query.limit: must be <= 100"],
    [
      "POST",
      "/e2b/sandboxes",
      { templateID: "base", network: { allowOut: ["example.com", "bad name"] } },
      'body.network.allowOut[1]: "bad name" is not a domain, *.domain, IP address or CIDR',
    ],
    [
      "POST",
      "/e2b/sandboxes",
      { templateID: "base", autoPause: true, autoPauseMemory: false, autoResume: { enabled: true } },
      "body.autoResume: cannot be enabled with autoPauseMemory: false; resume such a sandbox with connect",
    ],
    ["GET", "/e2b/v2/sandboxes?nextToken=zz", undefined, "query.nextToken: is not one this server issued"],
    [
      "GET",
      "/e2b/v2/sandboxes?order=DESC",
      undefined,
      'query.order: must be one of "asc", "desc"; did you mean "desc"?',
    ],
    [
      "GET",
      "/e2b/v2/sandboxes?state=runing",
      undefined,
      'query.state: must be one of "running", "paused"; did you mean "running"?',
    ],
  ];
  test.each(cases)("%s %s %j", async (method, path, body, message) => {
    const answer = await call(method, `${server.t.url}${path}`, body, {
      "X-API-KEY": server.env.E2B_API_KEY,
    });
    expect(answer).toEqual({ status: 400, body: { code: 400, message } });
  });
});

describe("the published clients show the message", () => {
  test("Paddock's SDK: InvalidRequestError's message is the detail", async () => {
    const connection = await userConnection(server.t, "validation-sdk");
    const listed = await Sandbox.list({ ...connection, pageSize: 1000 }).catch((error: unknown) => error);
    expect(listed).toBeInstanceOf(InvalidRequestError);
    expect(listed).toMatchObject({ code: "invalid_request", message: "query.pageSize: must be <= 200" });
    const created = await Sandbox.create({
      ...connection,
      networkPolicy: {
        defaultAction: "deny",
        egress: [{ action: "allow", target: "example.com", port: 443 }],
      },
    } as unknown as Parameters<typeof Sandbox.create>[0]).catch((error: unknown) => error);
    expect(created).toMatchObject({
      code: "invalid_request",
      message: 'body.networkPolicy.egress[0].port: unknown property "port"',
    });
  });

  test("OpenSandbox's SDK: SandboxApiException's message", async () => {
    const connectionConfig = new ConnectionConfig({ domain: server.t.url, apiKey: server.t.apiKey });
    const listed = await SandboxManager.create({ connectionConfig })
      .listSandboxInfos({ pageSize: 1000 })
      .catch((error: unknown) => error);
    expect(listed).toMatchObject({ statusCode: 400, message: "query.pageSize: must be <= 200" });
    const created = await OpenSandbox.create({
      connectionConfig,
      image: "paddock/base:bookworm",
      entrypoint: ["sleep", "infinity"],
      networkPolicy: { defaultAction: "deny", egress: [{ action: "alow", target: "example.com" }] },
    } as unknown as Parameters<typeof OpenSandbox.create>[0]).catch((error: unknown) => error);
    expect(created).toMatchObject({
      statusCode: 400,
      message: 'body.networkPolicy.egress[0].action: must be one of "allow", "deny"; did you mean "allow"?',
    });
  });

  test("E2B's SDK: the error's message", async () => {
    const options = { apiKey: server.env.E2B_API_KEY, apiUrl: server.env.E2B_API_URL };
    const listed = await E2bSandbox.list({ ...options, query: { state: ["runing" as "running"] } })
      .nextItems()
      .catch((error: unknown) => error);
    expect((listed as Error).message).toContain(
      'query.state: must be one of "running", "paused"; did you mean "running"?',
    );
    const limited = await E2bSandbox.list({ ...options, limit: 1000 })
      .nextItems()
      .catch((error: unknown) => error);
    expect((limited as Error).message).toContain("query.limit: must be <= 100");
    const created = await E2bSandbox.create("base", {
      ...options,
      network: { allowOut: ["example.com", "bad name"] },
    }).catch((error: unknown) => error);
    expect((created as Error).message).toContain(
      'body.network.allowOut[1]: "bad name" is not a domain, *.domain, IP address or CIDR',
    );
  });
});
