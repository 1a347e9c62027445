import type { Command } from "commander";
import { AuthenticationError, Paddock, PermissionError } from "paddock";
import { configPath, readConfig, writeConfig } from "../config-store.js";
import { baseUrlOf, type GlobalOptions } from "../connection.js";
import { printJson } from "../output.js";
import { valueOrPrompt } from "../prompts.js";

interface CredentialOptions extends GlobalOptions {
  email?: string;
  password?: string;
  json?: boolean;
}

/** `paddock signup`, `login` and `logout`: the credential kept in the user's config file. */
export function registerAccountCommands(program: Command): void {
  program
    .command("signup")
    .description("create an account, then log in to it")
    .option("--email <email>", "the account's email (asked for when missing)")
    .option("--password <password>", "its password (asked for, hidden, when missing)")
    .option("--json", "print the account as JSON")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<CredentialOptions>();
      const baseUrl = baseUrlOf(options);
      const { email, password } = await credentials(options);
      const account = await Paddock.signup(email, password, { baseUrl });
      await logIn(baseUrl, email, password);
      if (options.json) printJson(account);
      else console.log(`Signed up and logged in as ${account.email} (plan ${account.plan}) at ${baseUrl}`);
    });

  program
    .command("login")
    .description("log in and keep the session (or, with --api-key, that key) for later commands")
    .option("--email <email>", "the account's email (asked for when missing)")
    .option("--password <password>", "its password (asked for, hidden, when missing)")
    .addHelpText(
      "after",
      `\nWith --api-key KEY, that key is checked and stored instead of a session.\nThe credential and the server address are kept in ${configPath()} (mode 0600).`,
    )
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<CredentialOptions>();
      const baseUrl = baseUrlOf(options);
      if (options.apiKey) {
        await checkKey(baseUrl, options.apiKey);
        writeConfig({ ...readConfig(), baseUrl, credential: { kind: "api-key", secret: options.apiKey } });
        console.log(`Logged in with an API key at ${baseUrl}`);
        return;
      }
      const { email, password } = await credentials(options);
      await logIn(baseUrl, email, password);
      console.log(`Logged in as ${email} at ${baseUrl}`);
    });

  program
    .command("logout")
    .description("end the stored session and forget the stored credential")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      const config = readConfig();
      if (!config.credential) {
        console.log("Not logged in");
        return;
      }
      if (config.credential.kind === "session") {
        const client = new Paddock({ baseUrl: baseUrlOf(options), apiKey: config.credential.secret });
        // A session that has already ended needs no ending; the local credential goes either way.
        await client.logout().catch((error: unknown) => {
          if (!(error instanceof AuthenticationError)) throw error;
        });
      }
      const { credential: _forgotten, ...rest } = config;
      writeConfig(rest);
      console.log("Logged out");
    });
}

async function credentials(options: CredentialOptions): Promise<{ email: string; password: string }> {
  const email = await valueOrPrompt(options.email, { message: "Email:", option: "--email" });
  const password = await valueOrPrompt(options.password, {
    message: "Password:",
    option: "--password",
    hidden: true,
  });
  return { email, password };
}

async function logIn(baseUrl: string, email: string, password: string): Promise<void> {
  const { session } = await Paddock.login(email, password, { baseUrl });
  writeConfig({
    ...readConfig(),
    baseUrl,
    credential: { kind: "session", secret: session.token, email, expiresAt: session.expiresAt },
  });
}

/** Refuses a key the server does not know; a scoped key (refused /auth/me by scope) is a real key. */
async function checkKey(baseUrl: string, apiKey: string): Promise<void> {
  await new Paddock({ baseUrl, apiKey }).me().catch((error: unknown) => {
    if (!(error instanceof PermissionError)) throw error;
  });
}
