import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadTemplates } from "@paddock/runtime";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

// The six coding-agent templates, each in a sandbox under gVisor, created as a user creates one:
// the provider's credential and base URL in `env`. In each, `<cli> --version` must print exactly
// the version its template.toml pins, and one real non-interactive prompt must reach a stand-in
// for the provider's HTTP API that the test starts inside the same sandbox
// (agents/stand-in-provider.mjs): the stand-in must receive the prompt with the credential from
// `env`, and the CLI must print the stand-in's answer.

const standInSource = readFileSync(new URL("./agents/stand-in-provider.mjs", import.meta.url), "utf8");
const standInPort = 8787;
const standInUrl = `http://127.0.0.1:${standInPort}`;
const standInLog = "/tmp/stand-in-provider.jsonl";

interface Agent {
  id: string;
  /** The command on the PATH. */
  cli: string;
  /** The npm package whose pinned version the CLI reports. */
  npm: string;
  /** The sandbox's env at create, given the credential. */
  env(credential: string): Record<string, string>;
  /** The non-interactive command line that sends `prompt` (quoted for the shell). */
  prompt(prompt: string): string;
  /** Where the model call goes. */
  path: RegExp;
  /** The request header carrying the credential, as the stand-in must see it. */
  credentialHeader(credential: string): [string, string];
  /** Settings files written before the prompt (home-relative path, content). */
  files?: Record<string, string>;
}

const bearer = (credential: string): [string, string] => ["authorization", `Bearer ${credential}`];
// Usage statistics off where a CLI would send them anywhere but the stand-in.
const noUsageStatistics = JSON.stringify({ privacy: { usageStatisticsEnabled: false } });

const agents: Agent[] = [
  {
    id: "claude-code",
    cli: "claude",
    npm: "@anthropic-ai/claude-code",
    env: (credential) => ({
      ANTHROPIC_API_KEY: credential,
      ANTHROPIC_BASE_URL: standInUrl,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    }),
    prompt: (prompt) => `claude --dangerously-skip-permissions -p ${prompt}`,
    path: /^\/v1\/messages(\?|$)/,
    credentialHeader: (credential) => ["x-api-key", credential],
  },
  {
    id: "codex",
    cli: "codex",
    npm: "@openai/codex",
    env: (credential) => ({ OPENAI_API_KEY: credential, OPENAI_BASE_URL: `${standInUrl}/v1` }),
    prompt: (prompt) => `codex exec --skip-git-repo-check ${prompt} < /dev/null`,
    path: /^\/v1\/responses$/,
    credentialHeader: bearer,
  },
  {
    id: "gemini-cli",
    cli: "gemini",
    npm: "@google/gemini-cli",
    env: (credential) => ({
      GEMINI_API_KEY: credential,
      GOOGLE_GEMINI_BASE_URL: standInUrl,
      GEMINI_MODEL: "gemini-2.5-flash",
    }),
    prompt: (prompt) => `gemini -p ${prompt}`,
    path: /^\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/,
    credentialHeader: (credential) => ["x-goog-api-key", credential],
    files: { ".gemini/settings.json": noUsageStatistics },
  },
  {
    id: "opencode",
    cli: "opencode",
    npm: "opencode-ai",
    env: (credential) => ({ ANTHROPIC_API_KEY: credential, ANTHROPIC_BASE_URL: `${standInUrl}/v1` }),
    prompt: (prompt) => `opencode run -m anthropic/claude-sonnet-4-5 ${prompt}`,
    path: /^\/v1\/messages$/,
    credentialHeader: (credential) => ["x-api-key", credential],
  },
  {
    id: "qwen-code",
    cli: "qwen",
    npm: "@qwen-code/qwen-code",
    env: (credential) => ({
      OPENAI_API_KEY: credential,
      OPENAI_BASE_URL: `${standInUrl}/v1`,
      OPENAI_MODEL: "qwen3-coder-plus",
    }),
    prompt: (prompt) => `qwen -p ${prompt}`,
    path: /^\/v1\/chat\/completions$/,
    credentialHeader: bearer,
    files: { ".qwen/settings.json": noUsageStatistics },
  },
  {
    id: "copilot-cli",
    cli: "copilot",
    npm: "@github/copilot",
    env: (credential) => ({
      COPILOT_PROVIDER_API_KEY: credential,
      COPILOT_PROVIDER_BASE_URL: `${standInUrl}/v1`,
      COPILOT_MODEL: "gpt-4.1",
      COPILOT_OFFLINE: "true",
    }),
    prompt: (prompt) => `copilot -s -p ${prompt}`,
    path: /^\/v1\/chat\/completions$/,
    credentialHeader: bearer,
  },
];

const manifests = loadTemplates(resolve("templates"));

/** The version `[npm]` pins for the agent's package in its template.toml. */
function pinnedVersion(agent: Agent): string {
  const version = manifests.get(agent.id)?.npm[agent.npm];
  if (version === undefined) throw new Error(`templates/${agent.id}/template.toml pins no ${agent.npm}`);
  return version;
}

/** Matches `version` as a whole version, not part of a longer one (a sentence's full stop may follow). */
const wholeVersion = (version: string) =>
  new RegExp(`(?<![\\w.-])v?${version.replaceAll(".", "\\.")}(?![\\w-]|\\.\\w)`);

interface LoggedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

describe("coding-agent templates under gVisor", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string; timeoutSeconds: number };

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
    connection = { ...(await userConnection(t, "agents")), timeoutSeconds: 900 };
  });
  afterAll(async () => {
    await t?.dispose();
  });

  describe.each(agents.map((agent) => [agent.id, agent] as const))("%s", (_id, agent) => {
    const credential = `sk-test-${randomBytes(16).toString("hex")}`;
    const nonce = randomBytes(6).toString("hex");
    const prompt = `say hi ${nonce}`;
    const answer = `Hi from the stand-in provider ${randomBytes(6).toString("hex")}`;
    let sandbox: Sandbox;

    beforeAll(async () => {
      sandbox = await Sandbox.create({ ...connection, template: agent.id, env: agent.env(credential) });
    });
    afterAll(async () => {
      await sandbox?.kill().catch(() => undefined);
    });

    test(`${agent.cli} --version prints the version template.toml pins`, async () => {
      const version = pinnedVersion(agent);
      const result = await sandbox.commands.run(`${agent.cli} --version`);
      expect(result.stdout).toMatch(wholeVersion(version));
    });

    test(`${agent.cli} sends a prompt with the env's credential to the provider at the env's base URL`, async () => {
      await sandbox.files.write("/opt/stand-in-provider.mjs", standInSource);
      for (const [path, content] of Object.entries(agent.files ?? {})) {
        await sandbox.commands.run(`mkdir -p "$(dirname /root/${path})"`);
        await sandbox.files.write(`/root/${path}`, content);
      }
      await sandbox.commands.run(
        `node /opt/stand-in-provider.mjs ${standInPort} ${standInLog} '${answer}' > /tmp/stand-in-provider.out 2>&1`,
        { background: true },
      );
      // Until the stand-in answers (its listing of models is a GET the checks below skip).
      await sandbox.commands.run(
        `for i in $(seq 100); do curl -fsS -o /dev/null ${standInUrl}/v1/models && exit 0; sleep 0.1; done; exit 1`,
      );

      const result = await sandbox.commands.run(
        `mkdir -p /root/project && cd /root/project && timeout 150 ${agent.prompt(`'${prompt}'`)}`,
        { timeoutMs: 170_000 },
      );
      expect(result.stdout).toContain(answer);

      const requests = (await sandbox.files.read(standInLog))
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as LoggedRequest);
      const withPrompt = requests.filter(
        (request) => request.method === "POST" && request.body.includes(prompt),
      );
      expect(withPrompt.length).toBeGreaterThan(0);
      const [header, value] = agent.credentialHeader(credential);
      for (const request of withPrompt) {
        expect({ url: request.url, [header]: request.headers[header] }).toEqual({
          url: expect.stringMatching(agent.path),
          [header]: value,
        });
      }
    });
  });
});
