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
