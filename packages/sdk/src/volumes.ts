import type { RequestOptions, Transport } from "./transport.js";
import type { VolumeInfo } from "./types.js";
import { encodePart } from "./url.js";

/**
 * `client.volumes`: named volumes of the account, each holding at most its size, mounted into
 * any number of sandboxes (`Sandbox.create({ volumes })`) and outliving them.
 */
export class Volumes {
  constructor(private readonly transport: Transport) {}

  /** Creates an empty volume; `size` like "1Gi" (default: the server's). */
  create(name: string, options: RequestOptions & { size?: string } = {}): Promise<VolumeInfo> {
    const { size, ...request } = options;
    return this.transport.json("POST", "/volumes", { name, ...(size ? { size } : {}) }, request);
  }

  async list(options: RequestOptions = {}): Promise<VolumeInfo[]> {
    return (await this.transport.json<{ items: VolumeInfo[] }>("GET", "/volumes", undefined, options)).items;
  }

  get(id: string, options: RequestOptions = {}): Promise<VolumeInfo> {
    return this.transport.json("GET", `/volumes/${encodePart(id)}`, undefined, options);
  }

  /** Deletes the volume and its files; refused (`volume_in_use`) while a sandbox mounts it. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.fetch("DELETE", `/volumes/${encodePart(id)}`, undefined, options);
  }
}
