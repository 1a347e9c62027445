import { type ConnectionOptions, defaultBaseUrl } from "paddock";
import { readConfig } from "./config-store.js";
import { CliError } from "./output.js";

/** The options every command that talks to a server takes (declared once, on the program). */
export interface GlobalOptions {
  baseUrl?: string;
  apiKey?: string;
}

/** `--base-url` > `PADDOCK_BASE_URL` > the stored address > http://127.0.0.1:8080. */
export function baseUrlOf(options: GlobalOptions): string {
  return options.baseUrl || process.env.PADDOCK_BASE_URL || readConfig().baseUrl || defaultBaseUrl;
}

/** The server and the credential to use: `--api-key` > `PADDOCK_API_KEY` > the stored one. */
export function connectionOf(
  options: GlobalOptions,
): Required<Pick<ConnectionOptions, "baseUrl" | "apiKey">> {
  const apiKey = options.apiKey || process.env.PADDOCK_API_KEY || readConfig().credential?.secret;
  if (!apiKey)
    throw new CliError(
      "not logged in: run `paddock login`, pass --api-key or set PADDOCK_API_KEY",
      "not_logged_in",
    );
  return { baseUrl: baseUrlOf(options), apiKey };
}
