import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  EGRESS_PORT,
  EGRESS_TOKEN_HEADER,
  Errors,
  EXECD_PORT,
  invalidField,
  PaddockError,
} from "@paddock/common";
import { ExecdClient, type SandboxOperations } from "@paddock/runtime";
import { accessTokenHeader, issueAccessToken } from "../access.js";
import { needsServerProxy } from "../lifecycle-extensions.js";
import { errorResponses } from "../schemas/common.js";
import { Endpoint, EndpointParams, EndpointQuery } from "../schemas/sandboxes.js";

/** States on their own way to Running: an endpoint asked for then is answered once it arrives. */
const becomingRunning = new Set(["Pending", "Resuming"]);
const settleTimeoutMs = 30_000;

/**
 * Waits (bounded) while the sandbox is on its way to Running. OpenSandbox's SDK resumes a
 * sandbox (202, done in the background) and asks for its execd endpoint at once, then waits for
 * execd to answer; refusing the endpoint in between would fail every SDK resume.
 */
async function settled(sandboxes: SandboxOperations, id: string, state: string): Promise<void> {
  const deadline = Date.now() + settleTimeoutMs;
  while (becomingRunning.has(state) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    state = (await sandboxes.get(id)).status.state;
  }
}

export interface EndpointRoutesOptions {
  sandboxes: SandboxOperations;
  /** Public base URL of this server, e.g. http://127.0.0.1:8080 */
  publicUrl: () => string;
  secretKey: string;
}

/**
 * Endpoint resolution. By default the sandbox's own address (reachable from this host); with
 * `use_server_proxy`, `expires`, a secureAccess sandbox or one that sleeps or renews on its own
 * (its calls must pass this server to wake it or count), the server's proxy path. Ports served
 * by Paddock's own daemons come with the headers they require.
 */
export const endpointRoutes: FastifyPluginAsyncTypebox<EndpointRoutesOptions> = async (app, options) => {
  app.get(
    "/sandboxes/:sandboxId/endpoints/:port",
    {
      schema: {
        params: EndpointParams,
        querystring: EndpointQuery,
        response: { 200: Endpoint, ...errorResponses },
      },
    },
    async (request) => {
      const { sandboxId, port } = request.params;
      const { use_server_proxy: useProxy, expires } = request.query;
      if (useProxy && expires !== undefined) {
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField("query.expires", "cannot be combined with use_server_proxy"),
        );
      }
      const sandbox = await options.sandboxes.get(sandboxId);
      const tokens = options.sandboxes.tokens(sandboxId);
      const headers: Record<string, string> = {};
      if (port === EXECD_PORT) Object.assign(headers, ExecdClient.accessHeaders(tokens.execd));
      if (port === EGRESS_PORT) headers[EGRESS_TOKEN_HEADER] = tokens.egress;

      // A sleeping sandbox's own address answers nothing, and calls sent there are not seen as use.
      const viaServer = needsServerProxy(sandbox);
      const proxied = useProxy || expires !== undefined || sandbox.secureAccess || viaServer;
      if (!proxied) {
        await settled(options.sandboxes, sandboxId, sandbox.status.state);
        const target = await options.sandboxes.target(sandboxId, port);
        return {
          endpoint: `${target.host}:${target.port}`,
          ...(Object.keys(headers).length ? { headers } : {}),
        };
      }
      if (expires !== undefined) {
        const seconds = Number(expires);
        if (!Number.isSafeInteger(seconds) || seconds * 1000 <= Date.now()) {
          throw new PaddockError(
            Errors.invalidRequest,
            "expires must be a Unix time in seconds, in the future",
          );
        }
        headers[accessTokenHeader] = issueAccessToken(options.secretKey, sandboxId, seconds);
      } else if (sandbox.secureAccess || (viaServer && !useProxy)) {
        // Proxied without being asked: the endpoint and its headers still suffice, as an address would.
        headers[accessTokenHeader] = issueAccessToken(options.secretKey, sandboxId);
      }
      const base = options
        .publicUrl()
        .replace(/^https?:\/\//, "")
        .replace(/\/$/, "");
      return {
        endpoint: `${base}/v1/sandboxes/${sandboxId}/proxy/${port}`,
        ...(Object.keys(headers).length ? { headers } : {}),
      };
    },
  );
};
