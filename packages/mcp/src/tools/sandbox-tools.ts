import { Sandbox } from "paddock";
import { z } from "zod";
import { boundedText } from "../bounded-output.js";
import { defineTool } from "../tool.js";
import { textResult } from "../tool-results.js";

/** Sandboxes per page of list_sandboxes: a page is one bounded answer. */
const sandboxesPerPage = 100;

export const sandboxIdField = z
  .string()
  .min(1)
  .max(128)
  .describe("The sandbox's id, as create_sandbox or list_sandboxes gave it (sbx_…).");

export const listTemplates = defineTool({
  name: "list_templates",
  surface: "sandboxes",
  title: "List templates",
  description:
    "Lists the templates a sandbox can start from (python, node, ubuntu, code-interpreter, …): each id with what it holds, the ports its services listen on and the environment variables it reads.",
  input: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, { connection }) {
    const templates = await Sandbox.templates(connection);
    const lines = templates.map((template) => {
      const ports = template.ports.map((port) => `${port.port} (${port.name})`).join(", ");
      const env = template.env.map((variable) => variable.name).join(", ");
      return [
        `${template.id}: ${template.name}. ${template.description}`,
        ...(ports ? [`  ports: ${ports}`] : []),
        ...(env ? [`  env: ${env}`] : []),
      ].join("\n");
    });
    return textResult(boundedText(lines.join("\n"), "Ask for one template by id in create_sandbox."));
  },
});

export const createSandbox = defineTool({
  name: "create_sandbox",
  surface: "sandboxes",
  title: "Create a sandbox",
  description:
    "Starts an isolated Linux sandbox (its own filesystem, processes and network; root inside) from a template and answers its id once it is running. Run commands and code in it with the other tools, and kill it with kill_sandbox when done.",
  input: {
    template: z
      .string()
      .min(1)
      .max(128)
      .default("python")
      .describe("Template id (see list_templates); default `python` (Python 3 with pip)."),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Lifetime in seconds, after which the sandbox is deleted. Leave out for one that does not expire (it still pauses after the plan's idle time and wakes on use).",
      ),
    env: z
      .record(z.string().min(1).max(256), z.string().max(32 * 1024))
      .optional()
      .describe("Environment variables for everything that runs in the sandbox, such as provider API keys."),
  },
  annotations: { destructiveHint: false, openWorldHint: false },
  async run({ template, timeoutSeconds, env }, { connection }) {
    const sandbox = await Sandbox.create({
      ...connection,
      template,
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      ...(env ? { env } : {}),
    });
    const expiry = sandbox.expiresAt ? `expires at ${sandbox.expiresAt}` : "does not expire";
    return textResult(
      `Created sandbox ${sandbox.id} from template ${sandbox.template ?? template} (state ${sandbox.state}; ${expiry}).`,
    );
  },
});

export const listSandboxes = defineTool({
  name: "list_sandboxes",
  surface: "sandboxes",
  title: "List sandboxes",
  description: "Lists the account's sandboxes, newest first: id, state, template, creation and expiry times.",
  input: {
    state: z
      .array(z.enum(["Pending", "Running", "Pausing", "Paused", "Stopping", "Terminated", "Failed"]))
      .max(7)
      .optional()
      .describe('Only sandboxes in these states (for example ["Running"]); default: all.'),
    page: z.number().int().min(1).max(10_000).default(1).describe("Page of the list, from 1."),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ state, page }, { connection }) {
    const list = await Sandbox.list({
      ...connection,
      page,
      pageSize: sandboxesPerPage,
      ...(state ? { state } : {}),
    });
    if (list.items.length === 0)
      return textResult(page > 1 ? `No sandboxes on page ${page}.` : "No sandboxes.");
    const lines = list.items.map(
      (sandbox) =>
        `${sandbox.id}  ${sandbox.state}  ${sandbox.template ?? "-"}  created ${sandbox.createdAt}  expires ${sandbox.expiresAt ?? "never"}`,
    );
    const { pagination } = list;
    if (pagination.hasNextPage)
      lines.push(
        `(page ${pagination.page} of ${pagination.totalPages}; pass page: ${pagination.page + 1} for more)`,
      );
    return textResult(lines.join("\n"));
  },
});

export const killSandbox = defineTool({
  name: "kill_sandbox",
  surface: "sandboxes",
  title: "Kill a sandbox",
  description: "Deletes a sandbox and everything in it (its processes and files). It cannot be undone.",
  input: { sandboxId: sandboxIdField },
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ sandboxId }, { connection }) {
    await Sandbox.kill(sandboxId, connection);
    return textResult(`Killed sandbox ${sandboxId}.`);
  },
});

export const getEndpoint = defineTool({
  name: "get_endpoint",
  surface: "sandboxes",
  title: "Get a public URL for a port",
  description:
    "A URL that reaches a port inside the sandbox over HTTP and WebSocket (a web server, a notebook, an app being built). The URL itself is the credential: anyone holding it reaches the port until it expires.",
  input: {
    sandboxId: sandboxIdField,
    port: z.number().int().min(1).max(65_535).describe("The port a server inside the sandbox listens on."),
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(24 * 3600)
      .optional()
      .describe("How long the URL works, from 60 s to a day; default one hour."),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ sandboxId, port, expiresInSeconds }, { connection }) {
    const sandbox = await Sandbox.connect(sandboxId, connection);
    const endpoint = await sandbox.getEndpoint(port, expiresInSeconds ? { expiresInSeconds } : {});
    return textResult(
      `${endpoint.url}\n(port ${port} of ${sandboxId}; works until ${endpoint.expiresAt}. Something must listen on the port, on 0.0.0.0, for it to answer.)`,
    );
  },
});
