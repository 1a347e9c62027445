import type { RequestOptions, Transport } from "./transport.js";
import type { SecretInfo } from "./types.js";
import { encodePart } from "./url.js";

/**
 * `client.secrets`: values the server keeps encrypted and injects into sandboxes by name
 * (`Sandbox.create({ secrets })`). Values go in; only names and timestamps come back.
 */
export class Secrets {
  constructor(private readonly transport: Transport) {}

  /** Creates the secret or replaces its value. */
  set(name: string, value: string, options: RequestOptions = {}): Promise<SecretInfo> {
    return this.transport.json("POST", "/secrets", { name, value }, options);
  }

  async list(options: RequestOptions = {}): Promise<SecretInfo[]> {
    return (await this.transport.json<{ items: SecretInfo[] }>("GET", "/secrets", undefined, options)).items;
  }

  async delete(name: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.fetch("DELETE", `/secrets/${encodePart(name)}`, undefined, options);
  }
}
