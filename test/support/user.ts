import type { TestServer } from "@paddock/server/testing";
import WebSocket from "ws";
import { Paddock } from "../../packages/sdk/src/index.js";

/** What a user holds after signing up, logging in and creating an API key: the SDK's connection. */
export async function userConnection(
  t: TestServer,
  name: string,
): Promise<{ baseUrl: string; apiKey: string; timeoutSeconds: number }> {
  const email = `${name}@example.com`;
  await Paddock.signup(email, "correct horse battery", { baseUrl: t.url });
  const { client } = await Paddock.login(email, "correct horse battery", { baseUrl: t.url });
  const { secret } = await client.keys.create({ name });
  return { baseUrl: t.url, apiKey: secret, timeoutSeconds: 600 };
}

/** Resolves with the first message a VNC server sends through websockify at `url`: its RFB greeting. */
export function readVncGreeting(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ["binary"]);
    socket.binaryType = "nodebuffer";
    socket.once("message", (data: Buffer) => {
      resolve(data.toString("latin1"));
      socket.close();
    });
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`WebSocket upgrade refused: ${response.statusCode}`)),
    );
    socket.once("error", reject);
  });
}

/** fetch against the server's API as a user (a session token or an API key). */
export function userApi(
  t: TestServer,
  token: string,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<Response> {
  const { json, ...rest } = init;
  return fetch(`${t.url}${path}`, {
    ...rest,
    headers: {
      authorization: `Bearer ${token}`,
      ...(json === undefined ? {} : { "content-type": "application/json" }),
      ...(rest.headers as Record<string, string> | undefined),
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

/** `body` is `any`, as `JSON.parse` gives it: each test knows the shape of the answer it asked for. */
type ApiAnswer = { status: number; text: string; body: any };

/**
 * An API request as a user, answered as its status, its text and that text parsed as JSON. A body
 * is sent as JSON; a string body is sent as it is (for malformed JSON).
 */
export async function callApi(
  t: TestServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const response = await userApi(
    t,
    token,
    path,
    typeof body === "string"
      ? { method, headers: { "content-type": "application/json" }, body }
      : { method, json: body },
  );
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
}
