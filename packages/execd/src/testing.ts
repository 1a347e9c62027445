/** Test support: an in-process execd on a free loopback port, and envd behind it as E2B's SDK reaches it. */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { E2B_ENVD_VERSION, EXECD_ENVD_PREFIX } from "@paddock/common/contracts";
import { Sandbox } from "e2b";
import { Environment } from "./environment.js";
import { createExecd, type Execd } from "./http/server.js";

export const testToken = "secret";

export function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

/** An execd (token `secret`, no isolated sessions, the test's PATH unless `env` is given) and its base URL. */
export async function startExecd(
  options: Partial<Parameters<typeof createExecd>[0]> = {},
): Promise<{ execd: Execd; port: number; base: string }> {
  const execd = createExecd({
    token: testToken,
    env: new Environment({ PATH: process.env.PATH ?? "" }),
    isolated: false,
    ...options,
  });
  const port = await listen(execd.server);
  return { execd, port, base: `http://127.0.0.1:${port}` };
}

/**
 * An execd with its envd reached as the SDK reaches it: E2B's SDK cannot send execd's token, so a
 * small proxy adds it on the way, as the server's gateway does.
 */
export async function startEnvd(options: { fileMetadataPath?: string } = {}) {
  const { execd, port: execdPort } = await startExecd({ env: new Environment({}), ...options });
  const proxy = createServer((req, res) => {
    const forward = request(
      {
        host: "127.0.0.1",
        port: execdPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, "x-execd-access-token": testToken },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
    res.on("close", () => forward.destroy());
  });
  const base = `http://127.0.0.1:${await listen(proxy)}${EXECD_ENVD_PREFIX}`;
  const sandbox = new (Sandbox as unknown as new (options: object) => Sandbox)({
    sandboxId: "local",
    envdVersion: E2B_ENVD_VERSION,
    sandboxUrl: base,
    apiKey: "unused",
  });
  return {
    base,
    sandbox,
    close: () => {
      proxy.close();
      execd.close();
    },
  };
}
