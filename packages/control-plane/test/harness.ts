import { createLogger, type Logger, newSecret } from "@paddock/common";
import type { TestEngine } from "@paddock/db";
import { installErrorHandling } from "@paddock/http";
import type { RuntimeStack } from "@paddock/runtime";
import { openTestStack } from "@paddock/runtime/testing";
import { attachUpgradeProxy } from "@paddock/runtime-api";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { controlPlane, publicEndpointRoute } from "../src/index.js";

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface ControlPlaneUnderTest {
  url: string;
  app: FastifyInstance;
  stack: RuntimeStack;
  /** A JSON call; `token` goes in `Authorization: Bearer`. */
  call(
    method: string,
    path: string,
    token?: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** Signs up and logs in; returns the session token. */
  account(email: string): Promise<string>;
  dispose(): Promise<void>;
}

/**
 * The control plane as a host server would mount it: a real runtime stack (Docker, gVisor, a
 * fresh database), the plugin at the root of a Fastify instance on 127.0.0.1, and the upgrade
 * proxy for WebSockets.
 */
export async function startControlPlane(
  options: { engine?: TestEngine; logger?: Logger } = {},
): Promise<ControlPlaneUnderTest> {
  const test = await openTestStack({ engine: options.engine ?? "sqlite" });
  const { stack } = test;
  const logger = options.logger ?? createLogger({ level: process.env.PADDOCK_TEST_LOG_LEVEL ?? "error" });
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, bodyLimit: 1024 * 1024 });
  installErrorHandling(app, "detail");
  let url = "";
  await app.register(controlPlane, {
    db: stack.database.db,
    sandboxes: stack.sandboxes,
    volumes: stack.volumes,
    templates: stack.templates,
    templateBuilds: stack.templateBuilds,
    secretKey: stack.secretKey,
    publicUrl: () => url,
    // Billing and payments set up as in a full deployment, Stripe's address a closed local port:
    // no request leaves the machine, and a webhook cannot be signed without the secret.
    billing: {
      stripeSecretKey: "sk_test_harness",
      webhookSecret: newSecret("whsec_"),
      apiBase: "http://127.0.0.1:9",
      proPriceId: "price_harness",
      successUrl: "",
      cancelUrl: "",
      webhookToleranceSeconds: 300,
    },
    paymentsApiBase: "http://127.0.0.1:9",
  });
  attachUpgradeProxy(app.server, [publicEndpointRoute(stack.sandboxes, stack.secretKey)]);
  url = await app.listen({ host: "127.0.0.1", port: 0 });

  const call: ControlPlaneUnderTest["call"] = async (method, path, token, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  return {
    url,
    app,
    stack,
    call,
    async account(email) {
      const credentials = { email, password: "correct horse battery" };
      const signup = await call("POST", "/auth/signup", undefined, credentials);
      if (signup.status !== 201) throw new Error(`signup as ${email}: ${signup.status} ${signup.text}`);
      const login = await call("POST", "/auth/login", undefined, credentials);
      if (login.status !== 200) throw new Error(`login as ${email}: ${login.status} ${login.text}`);
      return login.body.token as string;
    },
    async dispose() {
      await app.close();
      await test.dispose();
    },
  };
}
