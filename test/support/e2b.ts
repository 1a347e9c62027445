import { startTestServer, type TestServer } from "@paddock/server/testing";

/** What E2B's SDKs read from the environment to reach a Paddock server instead of E2B's cloud. */
export interface E2bEnvironment {
  E2B_API_URL: string;
  E2B_SANDBOX_URL: string;
  E2B_API_KEY: string;
}

export interface E2bServer {
  t: TestServer;
  /** Set these (`Object.assign(process.env, server.env)`) and the stock SDKs talk to Paddock. */
  env: E2bEnvironment;
  /** Signs up another account and returns an E2B-shaped key of it. */
  keyFor(email: string): Promise<string>;
  dispose(): Promise<void>;
}

/** A live Paddock server (real Docker and gVisor) and an account with an `e2b_…` API key. */
export async function startE2bServer(
  options: Parameters<typeof startTestServer>[0] = {},
): Promise<E2bServer> {
  const t = await startTestServer(options);
  const keyFor = async (email: string) => {
    const session = await t.account(email);
    const created = await fetch(`${t.url}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "e2b", format: "e2b" }),
    });
    if (created.status !== 201)
      throw new Error(`creating a key failed: ${created.status} ${await created.text()}`);
    return ((await created.json()) as { secret: string }).secret;
  };
  const apiKey = await keyFor("e2b-user@example.com");
  return {
    t,
    env: { E2B_API_URL: `${t.url}/e2b`, E2B_SANDBOX_URL: `${t.url}/e2b`, E2B_API_KEY: apiKey },
    keyFor,
    dispose: () => t.dispose(),
  };
}
