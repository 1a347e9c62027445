import {
  Errors,
  type Logger,
  newId,
  type PaddockConfig,
  PaddockError,
  parseMemoryBytes,
} from "@paddock/common";
import { formatBytes } from "@paddock/common/format";
import type { HostVolume, Volume, VolumeMount } from "./model.js";
import type { VolumeStorage } from "./runtime.js";
import type { SandboxQuota } from "./sandbox-quota.js";
import type { VolumeAttachment, VolumeRepository } from "./volume-repository.js";

/** E2B's rule for volume names (`NewVolume.name`), bounded at a DNS label's length. */
const namePattern = /^[a-zA-Z0-9_-]{1,63}$/;
/** The smallest filesystem worth making, as for a sandbox's disk quota (decision 0120). */
const minSizeBytes = 16 * 2 ** 20;

export interface CreateVolumeInput {
  /** The account that will own it; null: the runtime API's operator. */
  owner: string | null;
  name: string;
  /** A quantity like "1Gi"; default `[volumes] default_size`. */
  size?: string | undefined;
  /** What the owner may hold; checked as the volume is written. */
  quota?: SandboxQuota | undefined;
}

/**
 * What the HTTP surfaces call. Another owner's volume is `volume_not_found`, by id and by name;
 * `owner` undefined means any owner (cleanup by the server itself).
 */
export interface VolumeOperations {
  create(input: CreateVolumeInput): Promise<Volume>;
  get(id: string, owner?: string | null): Promise<Volume>;
  list(owner?: string | null): Promise<Volume[]>;
  /** Unmounts and deletes the volume; `volume_in_use` while a sandbox that exists mounts it. */
  delete(id: string, owner?: string | null): Promise<void>;
  /**
   * The registry volumes each sandbox mounts, keyed by sandbox; the caller has checked the
   * sandboxes are the owner's.
   */
  mountsOf(sandboxIds: string[]): Promise<Map<string, VolumeMount[]>>;
}

/** A sandbox's volumes resolved to host directories, and how to undo what resolving made. */
export interface ResolvedVolumes {
  volumes: HostVolume[];
  attachments: VolumeAttachment[];
  /** Deletes the volumes this resolution created (a pvc with createIfNotExists), for a failed create. */
  rollback(): Promise<void>;
}

/**
 * The volume registry (decision 0192): named volumes per owner, each a filesystem of its size on
 * the engine's host, mounted into any number of sandboxes and outliving them.
 */
export class VolumeService implements VolumeOperations {
  constructor(
    private readonly deps: {
      repository: VolumeRepository;
      /** Undefined when the engine cannot give volumes a size (Kubernetes, quotas off). */
      storage: VolumeStorage | undefined;
      config: PaddockConfig["volumes"];
      logger: Logger;
    },
  ) {}

  async create(input: CreateVolumeInput): Promise<Volume> {
    const storage = this.storage();
    if (!namePattern.test(input.name)) {
      throw new PaddockError(
        Errors.invalidVolumeName,
        `volume name ${JSON.stringify(input.name.slice(0, 100))}: use 1 to 63 letters, digits, "_" and "-"`,
      );
    }
    const volume: Volume = {
      id: newId("vol"),
      owner: input.owner,
      name: input.name,
      sizeBytes: this.sizeOf(input.size),
      createdAt: new Date().toISOString(),
    };
    await this.deps.repository.insert(volume, input.quota);
    try {
      await storage.create(volume.id, volume.sizeBytes);
    } catch (error) {
      await this.deps.repository.remove(volume.id).catch(() => undefined);
      await storage.remove(volume.id).catch(() => undefined);
      throw error;
    }
    return volume;
  }

  async get(id: string, owner?: string | null): Promise<Volume> {
    const volume = await this.deps.repository.find(id);
    if (!volume || (owner !== undefined && volume.owner !== owner))
      throw new PaddockError(Errors.volumeNotFound, `no volume ${id}`);
    return volume;
  }

  /** The owner's volume of that name. */
  async getByName(name: string, owner: string | null): Promise<Volume> {
    const volume = await this.deps.repository.findByName(owner, name);
    if (!volume) throw new PaddockError(Errors.volumeNotFound, `no volume named ${name}`);
    return volume;
  }

  list(owner?: string | null): Promise<Volume[]> {
    return this.deps.repository.findAll(owner);
  }

  async delete(id: string, owner?: string | null): Promise<void> {
    const volume = await this.get(id, owner);
    if (!(await this.deps.repository.remove(volume.id))) {
      throw new PaddockError(Errors.volumeNotFound, `no volume ${id}`);
    }
    await this.storage().remove(volume.id);
  }

  /**
   * Resolves the volumes of a create for `owner` to host directories: `named` ones must exist; a
   * runtime API `pvc` is the operator's volume of that name, made when missing unless
   * `createIfNotExists` is false. Without storage, `pvc` stays with the engine (Docker named
   * volumes, Kubernetes claims) and `named` is refused.
   */
  async resolve(owner: string | null, volumes: HostVolume[]): Promise<ResolvedVolumes> {
    const resolved: HostVolume[] = [];
    const attachments: VolumeAttachment[] = [];
    const created: Volume[] = [];
    const rollback = async () => {
      for (const volume of created) {
        await this.delete(volume.id, volume.owner).catch((error: unknown) => {
          // Gone already: the removed sandbox took it (deleteOnSandboxTermination).
          if ((error as PaddockError).code === Errors.volumeNotFound.code) return;
          this.deps.logger.warn(
            { volumeId: volume.id, err: error },
            "removing a volume made for a failed create",
          );
        });
      }
    };
    try {
      for (const volume of volumes) {
        if (!volume.named && !(volume.pvc && this.deps.storage)) {
          resolved.push(volume);
          continue;
        }
        let found: Volume;
        let deleteWithSandbox = false;
        if (volume.named) {
          this.storage();
          found = await this.getByName(volume.named.name, owner);
        } else {
          const pvc = volume.pvc as NonNullable<HostVolume["pvc"]>;
          const existing = await this.deps.repository.findByName(owner, pvc.claimName);
          if (existing) {
            found = existing;
          } else if (pvc.createIfNotExists === false) {
            throw new PaddockError(
              Errors.volumeNotFound,
              `volume ${pvc.claimName} does not exist and createIfNotExists is false`,
            );
          } else {
            const size = typeof pvc.storage === "string" ? pvc.storage : undefined;
            found = await this.createForClaim(owner, pvc.claimName, size);
            created.push(found);
            deleteWithSandbox = pvc.deleteOnSandboxTermination === true;
          }
        }
        const directory = await this.storage()
          .directory(found.id)
          .catch(async (error: unknown) => {
            // Deleted since it was looked up: as if it had never been there.
            if (!(await this.deps.repository.find(found.id)))
              throw new PaddockError(Errors.volumeNotFound, `volume ${found.name} was deleted`);
            throw error;
          });
        resolved.push({ ...volume, managed: { volumeId: found.id, directory } });
        attachments.push({
          volumeId: found.id,
          mountPath: volume.mountPath,
          readOnly: volume.readOnly === true,
          deleteWithSandbox,
        });
      }
    } catch (error) {
      await rollback();
      throw error;
    }
    return { volumes: resolved, attachments, rollback };
  }

  /** The registry volumes a sandbox mounts (none for another owner's sandbox: ask after checking it). */
  mountsOf(sandboxIds: string[]): Promise<Map<string, VolumeMount[]>> {
    return this.deps.repository.mountsOf(sandboxIds);
  }

  /** A removed sandbox's volumes are free; those made to go with it go now. */
  async sandboxRemoved(sandboxId: string): Promise<void> {
    for (const volumeId of await this.deps.repository.detach(sandboxId)) {
      const volume = await this.deps.repository.find(volumeId);
      if (!volume) continue;
      await this.delete(volume.id, volume.owner).catch((error: unknown) => {
        // Another sandbox mounts it too: it stays, as a volume that existed before would.
        if ((error as PaddockError).code === Errors.volumeInUse.code) return;
        // The sandbox is gone whatever happens to its volume: a failure here is logged, not its delete's.
        this.deps.logger.warn({ volumeId, sandboxId, err: error }, "removing a sandbox's own volume failed");
      });
    }
  }

  /** Mounts every volume whose filesystem the host lost (a restart, a reboot). */
  async remount(): Promise<void> {
    const storage = this.deps.storage;
    if (!storage) return;
    for (const volume of await this.deps.repository.findAll()) {
      await storage.mount(volume.id).catch((error: unknown) => {
        this.deps.logger.error({ volumeId: volume.id, err: error }, "cannot mount a volume");
      });
    }
  }

  /** A pvc's volume, made on demand; one made by a concurrent create of the same claim is taken. */
  private async createForClaim(
    owner: string | null,
    name: string,
    size: string | undefined,
  ): Promise<Volume> {
    try {
      return await this.create({ owner, name, size });
    } catch (error) {
      const existing = await this.deps.repository.findByName(owner, name);
      if ((error as PaddockError).code === Errors.volumeExists.code && existing) return existing;
      throw error;
    }
  }

  private sizeOf(size: string | undefined): number {
    const { default_size, max_size } = this.deps.config;
    const maxBytes = parseMemoryBytes(max_size) ?? 0;
    const bytes = parseMemoryBytes(size ?? default_size);
    if (bytes === undefined || bytes < minSizeBytes || bytes > maxBytes) {
      throw new PaddockError(
        Errors.invalidVolumeSize,
        `volume size ${JSON.stringify(String(size).slice(0, 100))}: give a quantity like "1Gi", from 16Mi to ${formatBytes(maxBytes)} ([volumes] max_size)`,
      );
    }
    return bytes;
  }

  private storage(): VolumeStorage {
    if (!this.deps.storage) {
      throw new PaddockError(
        Errors.volumesUnavailable,
        "this server offers no volumes: it needs the Docker engine on its own host, run as root with overlay2, and docker.default_disk set (decision 0192)",
      );
    }
    return this.deps.storage;
  }
}
