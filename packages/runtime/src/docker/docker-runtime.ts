import { join, resolve } from "node:path";
import {
  EGRESS_POLICY_ENV,
  EGRESS_PORT,
  EGRESS_TOKEN_ENV,
  EGRESS_UPSTREAM_DNS_ENV,
  Errors,
  EXECD_CPU_LIMIT_ENV,
  EXECD_MOUNT,
  EXECD_TOKEN_ENV,
  EXECD_WAIT_EGRESS_ENV,
  execdEntrypoint,
  type Logger,
  type PaddockConfig,
  PaddockError,
  stashNodeVariables,
} from "@paddock/common";
import Docker from "dockerode";
import { ExecdClient } from "../execd/client.js";
import type { PauseDepth } from "../model.js";
import { waitForHttp } from "../readiness.js";
import {
  type RegistryAuth,
  type Runtime,
  RuntimeStartError,
  type SecureRuntime,
  sandboxCapabilities,
  type VolumeStorage,
  type Workload,
  type WorkloadExit,
  type WorkloadSpec,
  type WorkloadStatus,
  type WorkloadSummary,
} from "../runtime.js";
import { egressUpstreamDns } from "../upstream-dns.js";
import {
  checkpointContainer,
  hasCheckpoint,
  restoreContainer,
  runcCheckpointProblem,
} from "./checkpoints.js";
import { DiskQuotas } from "./disk-quota.js";
import { ensureExecdVolume } from "./execd-volume.js";
import { succeeds } from "./existence-check.js";
import { dockerDefaultSeccompPath, runcIsolationHardening } from "./isolation-seccomp.js";
import { demuxDockerLogs } from "./logs.js";
import { MemoryKills } from "./memory-kills.js";
import { ensureSandboxNetwork } from "./network.js";
import { NetworkFiles } from "./network-files.js";
import { PhaseTimer } from "./phase-timer.js";
import { killRunscLeftovers } from "./runsc-leftovers.js";
import { resolveDockerSecureRuntime, resolveNetstackRuntime } from "./secure-runtime.js";
import { commitSnapshotImage, removeStagingImages, snapshotProblem } from "./snapshot-image.js";
import { VolumeImages } from "./volume-images.js";
import {
  type CheckedPath,
  checkPathsAgain,
  type Mount,
  mountsFor,
  removeOwnedVolumes,
  removeVolumesCreatedBy,
} from "./volumes.js";

export const managedLabel = "paddock.managed";
export const roleLabel = "paddock.role";
export const sandboxLabel = "paddock.sandbox";
export const instanceLabel = "paddock.instance";
/** One RUN step of a template build (decision 0198). */
export interface BuildContainerSpec {
  buildId: string;
  step: number;
  image: string;
  /** Run with `/bin/sh -c`. */
  command: string;
  user: string;
  workdir: string;
  cpuMillis: number;
  memoryBytes: number;
  /** A disk quota for what the step writes; 0 or absent: none (or the host has none). */
  diskBytes?: number;
}

/** The volume paths to check again before each start of a stopped sandbox (`CheckedPath[]`). */
const checkedPathsLabel = "paddock.checked-paths";

export class DockerRuntime implements Runtime {
  readonly kind = "docker" as const;
  readonly docker: Docker;
  private resolvedSecureRuntime: SecureRuntime | undefined;
  private execdVolume = "";
  private gpuPresent = false;
  /** Per-sandbox disk quotas, when this engine and process can enforce them (decision 0120). */
  private diskQuotas: DiskQuotas | undefined;
  /** Volumes stand on the same fixed-size filesystems as disk quotas, so exist where those can. */
  private volumeImages: VolumeImages | undefined;
  private diskQuotaProblem = "";
  /** The sandboxes' /etc/hosts and friends, off the engine's disk (when this process may mount them). */
  private networkFiles: NetworkFiles | undefined;
  /** Set when commits of this engine runtime's sandboxes would miss their files. */
  private snapshotProblem: string | undefined;
  /**
   * The engine runtime for gVisor sandboxes without a network policy, on gVisor's own network
   * stack, whose pauses to disk keep memory (decision 0194); undefined when not in use. With it,
   * the upstream resolver their resolv.conf names.
   */
  private netstack: { engineName: string; nameserver: string } | undefined;
  /** Under runc, isolated sessions need a narrowly widened seccomp profile (decision 0090); read once. */
  private runcHardening: Awaited<ReturnType<typeof runcIsolationHardening>>;

  constructor(
    private readonly config: PaddockConfig,
    private readonly logger: Logger,
  ) {
    this.docker = new Docker({ socketPath: config.docker.socket_path });
  }

  get secureRuntime(): SecureRuntime {
    if (!this.resolvedSecureRuntime) throw new Error("DockerRuntime.start() has not run");
    return this.resolvedSecureRuntime;
  }

  async start(): Promise<void> {
    let info: { Runtimes?: Record<string, unknown>; Driver?: string; ExperimentalBuild?: boolean };
    try {
      info = await this.docker.info();
    } catch (error) {
      throw new RuntimeStartError(
        `cannot reach the Docker engine at ${this.config.docker.socket_path} (${(error as Error).message}); start dockerd or set docker.socket_path`,
      );
    }
    this.diskQuotaProblem = DiskQuotas.unsupportedReason(info, this.config.docker.socket_path) ?? "";
    if (this.diskQuotaProblem && this.config.docker.default_disk) {
      throw new RuntimeStartError(
        `per-sandbox disk quotas cannot be enforced: ${this.diskQuotaProblem}; set docker.default_disk = "" to run without them`,
      );
    }
    if (!this.diskQuotaProblem) {
      this.diskQuotas = new DiskQuotas(join(resolve(this.config.server.data_dir), "disks"));
      this.volumeImages = new VolumeImages(join(resolve(this.config.server.data_dir), "volumes"));
    }
    if (NetworkFiles.possible(this.config.docker.socket_path)) {
      this.networkFiles = new NetworkFiles();
      // In the background, and a container the engine does not answer for (one of another
      // server's, stuck in its runtime) counts as alive: a host's leftovers must not keep this
      // server from starting.
      void this.networkFiles
        .releaseOrphans(
          (sandboxId) => answersWithin(succeeds(this.docker.getContainer(sandboxId).inspect()), 5000, true),
          10 * this.config.runtime.create_timeout_seconds * 1000,
        )
        .catch((error) => this.logger.warn({ err: error }, "releasing leftover network files failed"));
    }
    const engineRuntimes = Object.keys(info.Runtimes ?? {});
    const runtimeArgs = Object.fromEntries(
      Object.entries(info.Runtimes ?? {}).map(([name, runtime]) => [
        name,
        (runtime as { runtimeArgs?: string[] }).runtimeArgs ?? [],
      ]),
    );
    this.resolvedSecureRuntime = resolveDockerSecureRuntime(
      this.config.secure_runtime,
      engineRuntimes,
      runtimeArgs,
    );
    this.netstack = resolveNetstackRuntime(
      this.config.secure_runtime.netstack_runtime,
      this.resolvedSecureRuntime,
      runtimeArgs,
      {
        nameserver: egressUpstreamDns(this.config.egress.upstream_dns),
        networkFiles: Boolean(this.networkFiles),
      },
    );
    this.gpuPresent = engineRuntimes.includes("nvidia") && this.resolvedSecureRuntime.type === "";
    this.snapshotProblem = snapshotProblem(
      this.resolvedSecureRuntime.type,
      runtimeArgs[this.resolvedSecureRuntime.engineName] ?? [],
    );
    this.logger.info(
      {
        secureRuntime: this.resolvedSecureRuntime.type || "none",
        engineRuntime: this.resolvedSecureRuntime.engineName || "runc",
        ...(this.netstack ? { netstackRuntime: this.netstack.engineName } : {}),
      },
      "docker runtime ready",
    );
    await ensureSandboxNetwork(this.docker, {
      name: this.config.docker.network,
      subnet: this.config.docker.subnet,
      blockHostAccess: this.config.docker.block_host_access,
    });
    this.execdVolume = await ensureExecdVolume(this.docker, this.config.runtime.execd_image);
    await removeStagingImages(this.docker, `${instanceLabel}=${this.config.server.instance}`);
    if (this.resolvedSecureRuntime.type === "") {
      this.runcHardening = await runcIsolationHardening();
      // Without Paddock's seccomp profile, Node in the sandbox holds an io_uring CRIU cannot save.
      this.runcCheckpoints = this.runcHardening
        ? await runcCheckpointProblem(info)
        : `Docker's default seccomp profile is not at ${dockerDefaultSeccompPath} (\`make setup\` puts it there)`;
      if (this.runcCheckpoints) {
        this.logger.info(
          { why: this.runcCheckpoints },
          "runc sandboxes pause to disk with their filesystem only (no checkpoints)",
        );
      }
    }
  }

  /** Why runc sandboxes cannot be checkpointed, "" when they can; unset under another runtime. */
  private runcCheckpoints: string | undefined;

  private eventStream: NodeJS.ReadableStream | undefined;
  private watchingClosed = false;
  /** Whether each ended container was killed for memory, decided once (decision 0001). */
  private readonly memoryKills = new MemoryKills();

  async close(): Promise<void> {
    this.watchingClosed = true;
    (this.eventStream as { destroy?: () => void } | undefined)?.destroy?.();
  }

  /**
   * Follows the engine's container events for this instance's sandboxes. The stream ends when
   * the engine restarts: it is opened again (every second until the engine answers) from the
   * second the last one was lost, so the deaths of the restart itself are replayed too.
   */
  watchExits(listener: (sandboxId: string, exit: WorkloadExit) => void, sinceSeconds?: number): void {
    if (this.watchingClosed) return;
    let reopening = false;
    const reopen = () => {
      if (reopening || this.watchingClosed) return;
      reopening = true;
      const since = sinceSeconds ?? Math.floor(Date.now() / 1000);
      setTimeout(() => this.watchExits(listener, since), 1000).unref();
    };
    void this.docker
      .getEvents({
        ...(sinceSeconds !== undefined ? { since: sinceSeconds } : {}),
        filters: {
          type: ["container"],
          event: ["die", "oom", "destroy"],
          label: [
            `${managedLabel}=true`,
            `${instanceLabel}=${this.config.server.instance}`,
            `${roleLabel}=sandbox`,
          ],
        },
      })
      .then((stream) => {
        this.eventStream = stream;
        // The engine forgets its events when it restarts: what ended meanwhile is read from
        // the containers themselves (a death reported twice is settled once).
        if (sinceSeconds !== undefined) void this.reportEnded(listener);
        // From here on, a reopened stream starts at the time it was lost.
        sinceSeconds = undefined;
        let buffer = "";
        stream.on("data", (chunk: Buffer) => {
          buffer += chunk.toString("utf8");
          let newline = buffer.indexOf("\n");
          while (newline >= 0) {
            const line = buffer.slice(0, newline);
            buffer = buffer.slice(newline + 1);
            newline = buffer.indexOf("\n");
            const event = parseEvent(line);
            if (!event) continue;
            if (event.action === "oom") this.memoryKills.noteOom(event.containerId, event.atMs);
            else if (event.action === "destroy") this.memoryKills.forget(event.containerId);
            else this.reportExit(event.sandboxId, listener);
          }
        });
        stream.on("error", (error) => this.logger.warn({ err: error }, "docker event stream failed"));
        stream.on("close", reopen);
        stream.on("end", reopen);
      })
      .catch((error) => {
        this.logger.warn({ err: error }, "cannot watch docker events");
        reopen();
      });
  }

  private async reportEnded(listener: (sandboxId: string, exit: WorkloadExit) => void): Promise<void> {
    const ended = await this.docker
      .listContainers({
        all: true,
        filters: {
          status: ["exited", "dead"],
          label: [`${instanceLabel}=${this.config.server.instance}`, `${roleLabel}=sandbox`],
        },
      })
      .catch(() => []);
    for (const container of ended) {
      const sandboxId = container.Labels[sandboxLabel];
      if (sandboxId) this.reportExit(sandboxId, listener);
    }
  }

  /**
   * A sandbox's container died: how it ended comes from the same decision `inspectWorkload`
   * answers with (`MemoryKills`), so this report and a caller's inspect never disagree.
   */
  private reportExit(sandboxId: string, listener: (sandboxId: string, exit: WorkloadExit) => void): void {
    void this.inspectWorkload(sandboxId).then((status) => {
      // Running again or paused (a restart, a race with a resume): no exit to report.
      if (status.state === "running" || status.state === "paused") return;
      listener(sandboxId, {
        ...(status.exitCode !== undefined ? { exitCode: status.exitCode } : {}),
        oomKilled: status.oomKilled ?? false,
        ...(status.state === "missing" ? { vanished: true } : {}),
      });
    });
  }

  /** Where volumes live, once started; undefined where fixed-size filesystems cannot be made. */
  volumeStorage(): VolumeStorage | undefined {
    return this.volumeImages;
  }

  hasGpu(): boolean {
    return this.gpuPresent;
  }

  async hasImage(uri: string): Promise<boolean> {
    return succeeds(this.docker.getImage(uri).inspect());
  }

  async ensureImage(uri: string, auth?: RegistryAuth): Promise<void> {
    if (await this.hasImage(uri)) return;
    this.logger.info({ image: uri }, "pulling image");
    try {
      const stream = await this.docker.pull(
        uri,
        auth?.username ? { authconfig: { ...auth, serveraddress: registryOf(uri) } } : {},
      );
      await new Promise<void>((resolve, reject) =>
        this.docker.modem.followProgress(stream, (error) => (error ? reject(error) : resolve())),
      );
    } catch (error) {
      const message = String((error as Error).message);
      if (/unauthorized|authentication required|no basic auth credentials|denied/i.test(message)) {
        throw new PaddockError(
          Errors.registryAuthFailed,
          `registry refused credentials for ${uri}: ${message}`,
        );
      }
      throw new PaddockError(
        Errors.imageNotFound,
        `image ${uri} is not present and could not be pulled: ${message}`,
      );
    }
  }

  async createWorkload(spec: WorkloadSpec, signal?: AbortSignal): Promise<Workload> {
    const secure = this.secureRuntime;
    const pids = this.config.docker.pids_limit;
    const nproc = Math.max(32, Math.min(pids, Math.floor((spec.memoryBytes ?? 2 ** 30) / (8 * 2 ** 20))));
    const isolation = this.runcHardening;
    let containerId: string | undefined;
    if (spec.diskBytes && !this.diskQuotas) {
      throw new PaddockError(
        Errors.invalidRequest,
        `resourceLimits.ephemeral-storage cannot be enforced on this host: ${this.diskQuotaProblem}`,
      );
    }
    // Where a create's time goes, logged at debug level (bench/create reads it).
    const phases = new PhaseTimer();
    try {
      const hostname = spec.sandboxId.slice(0, 63);
      const [imageEnv, { mounts, checkedPaths }] = await Promise.all([
        this.imageEnv(spec.image),
        mountsFor(this.docker, spec),
      ]);
      phases.end("image and volumes");
      // Not beside the two above: a refused volume would have the cleanup below run while these
      // were still being mounted, and leave them mounted.
      // A network policy needs host-kernel sockets, where the sidecar's rules apply (decision 0006).
      const netstack = spec.networkPolicy ? undefined : this.netstack;
      const engineRuntime = netstack?.engineName ?? secure.engineName;
      const networkFiles = await this.networkFiles?.create(spec.sandboxId, hostname, netstack?.nameserver);
      phases.end("network files");
      const env = stashNodeVariables({ ...spec.env, [EXECD_TOKEN_ENV]: spec.execdToken }, imageEnv);
      if (spec.networkPolicy) env[EXECD_WAIT_EGRESS_ENV] = "1";
      if (spec.cpuMillis) env[EXECD_CPU_LIMIT_ENV] = String(spec.cpuMillis / 1000);
      const container = await this.docker.createContainer({
        name: spec.sandboxId,
        Image: spec.image,
        Entrypoint: execdEntrypoint(spec.entrypoint),
        Cmd: [],
        Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        Hostname: hostname,
        Labels: {
          ...spec.labels,
          [managedLabel]: "true",
          [instanceLabel]: this.config.server.instance,
          [roleLabel]: "sandbox",
          [sandboxLabel]: spec.sandboxId,
          ...(checkedPaths.length ? { [checkedPathsLabel]: JSON.stringify(checkedPaths) } : {}),
        },
        HostConfig: {
          ...(engineRuntime ? { Runtime: engineRuntime } : {}),
          NetworkMode: this.config.docker.network,
          CapDrop: ["ALL"],
          CapAdd: [...sandboxCapabilities, ...(isolation?.capAdd ?? [])],
          SecurityOpt: ["no-new-privileges:true", ...(isolation ? [isolation.securityOpt] : [])],
          Privileged: false,
          // Under gVisor the pids cgroup counts the Sentry's host threads, not guest processes
          // (too low a cap kills the whole sandbox); its kernel enforces RLIMIT_NPROC on guests
          // instead, sized so that a fork bomb runs out of processes before the sandbox runs out
          // of memory (which would kill it whole).
          PidsLimit: secure.type === "gvisor" ? Math.max(4096, pids * 8) : pids,
          Ulimits: [{ Name: "nproc", Soft: nproc, Hard: nproc }],
          Memory: spec.memoryBytes,
          MemorySwap: spec.memoryBytes,
          NanoCpus: spec.cpuMillis ? spec.cpuMillis * 1_000_000 : undefined,
          Mounts: [
            { Type: "volume", Source: this.execdVolume, Target: EXECD_MOUNT, ReadOnly: true },
            ...(networkFiles?.sandbox ?? []),
            ...mounts,
          ],
          // What the sandbox's first process prints lands on the host's disk: a bounded amount.
          LogConfig: { Type: "json-file", Config: { "max-size": "5m", "max-file": "2" } },
        },
      });
      containerId = container.id;
      phases.end("container create");
      if (spec.diskBytes) await this.diskQuotas?.attach(this.docker, spec.sandboxId, spec.diskBytes);
      phases.end("disk quota");
      await container.start();
      phases.end("container start");
      if (spec.networkPolicy) await this.startEgressSidecar(spec, container.id, networkFiles?.sidecar ?? []);
      phases.end("egress sidecar");
      const address = await this.serving(
        spec.sandboxId,
        spec.execdToken,
        Boolean(spec.networkPolicy),
        signal,
      );
      phases.end("execd answering");
      this.logger.debug(
        { sandboxId: spec.sandboxId, phasesMs: phases.durations },
        "sandbox workload created",
      );
      return { containerId: container.id, address };
    } catch (error) {
      await this.removeWorkload(spec.sandboxId).catch((cleanupError) =>
        this.logger.error(
          { err: cleanupError, sandboxId: spec.sandboxId },
          "cleanup after failed create failed",
        ),
      );
      await removeVolumesCreatedBy(this.docker, spec.sandboxId).catch(() => undefined);
      if (containerId && secure.type === "gvisor") await killRunscLeftovers(containerId);
      if (error instanceof PaddockError) throw error;
      const message = String((error as Error).message);
      if (/No such image/i.test(message)) {
        throw new PaddockError(Errors.imageNotFound, `image ${spec.image} not found`);
      }
      // The engine refused the request itself (a bind source that does not exist, say): the caller's to fix.
      if ((error as { statusCode?: number }).statusCode === 400) {
        throw new PaddockError(Errors.invalidRequest, `the container engine refused the sandbox: ${message}`);
      }
      throw new Error(`sandbox ${spec.sandboxId} failed to start: ${message}`, { cause: error });
    }
  }

  /**
   * Once a started sandbox has an address: names it in the sandbox's hosts file, then waits for
   * its execd (and egress sidecar) to answer. Resolves with the address.
   */
  private async serving(
    sandboxId: string,
    execdToken: string,
    egress: boolean,
    signal?: AbortSignal,
  ): Promise<string> {
    const container = this.docker.getContainer(sandboxId);
    const inspected = await container.inspect();
    const address = inspected.NetworkSettings.Networks[this.config.docker.network]?.IPAddress;
    if (!address) throw new Error("sandbox has no address on the sandbox network");
    await this.networkFiles?.setAddress(sandboxId, address, inspected.Config.Hostname);
    const alive = async () => {
      const state = (await container.inspect()).State;
      return state.Running
        ? undefined
        : `sandbox process exited (code ${state.ExitCode}) before execd answered`;
    };
    const timeoutMs = this.config.runtime.create_timeout_seconds * 1000;
    const ping = ExecdClient.ping(address, execdToken);
    await waitForHttp(ping.url, { headers: ping.headers, timeoutMs, signal, stillAlive: alive });
    if (egress) {
      await waitForHttp(`http://${address}:${EGRESS_PORT}/healthz`, { timeoutMs, signal, stillAlive: alive });
    }
    return address;
  }

  /** The image's own environment (empty when it cannot be read: the create then fails on its own). */
  private async imageEnv(image: string): Promise<Record<string, string>> {
    const inspected = await this.docker
      .getImage(image)
      .inspect()
      .catch(() => undefined);
    const env: Record<string, string> = {};
    for (const entry of inspected?.Config?.Env ?? []) {
      const separator = entry.indexOf("=");
      if (separator > 0) env[entry.slice(0, separator)] = entry.slice(separator + 1);
    }
    return env;
  }

  private async startEgressSidecar(
    spec: WorkloadSpec,
    sandboxContainerId: string,
    mounts: Mount[],
  ): Promise<void> {
    const upstream = egressUpstreamDns(this.config.egress.upstream_dns);
    const sidecar = await this.docker.createContainer({
      name: `${spec.sandboxId}-egress`,
      Image: this.config.egress.image,
      Env: [
        `${EGRESS_TOKEN_ENV}=${spec.egressToken}`,
        `${EGRESS_POLICY_ENV}=${JSON.stringify(spec.networkPolicy)}`,
        ...(upstream ? [`${EGRESS_UPSTREAM_DNS_ENV}=${upstream}`] : []),
      ],
      Labels: {
        [managedLabel]: "true",
        [instanceLabel]: this.config.server.instance,
        [roleLabel]: "egress",
        [sandboxLabel]: spec.sandboxId,
      },
      HostConfig: {
        // On the host kernel whatever the engine's default runtime: its rules must be made there,
        // in the namespace where the sandbox's sockets live (gVisor's hostinet included).
        Runtime: "runc",
        NetworkMode: `container:${sandboxContainerId}`,
        CapDrop: ["ALL"],
        CapAdd: ["NET_ADMIN"],
        SecurityOpt: ["no-new-privileges:true"],
        RestartPolicy: { Name: "always" },
        // Its own hosts and resolv.conf: the engine would give it the sandbox's, which the sandbox writes.
        Mounts: mounts,
        PidsLimit: 128,
        Memory: 128 * 2 ** 20,
      },
    });
    await sidecar.start();
  }

  /**
   * A container for one RUN step of an account's template build (decision 0198): a sandbox's
   * runtime, capabilities, seccomp, process and memory limits, network and bounded network files,
   * and a disk quota where the host has them; no execd, no volumes, nothing of the host. Created,
   * not started.
   */
  async createBuildContainer(
    spec: BuildContainerSpec,
  ): Promise<{ container: Docker.Container; name: string }> {
    const secure = this.secureRuntime;
    const isolation = this.runcHardening;
    const pids = this.config.docker.pids_limit;
    const name = `${this.buildContainerPrefix()}${spec.buildId.toLowerCase()}-${spec.step}`;
    const networkFiles = await this.networkFiles?.create(name, "build");
    const container = await this.docker.createContainer({
      name,
      Image: spec.image,
      Entrypoint: ["/bin/sh", "-c"],
      Cmd: [spec.command],
      User: spec.user,
      WorkingDir: spec.workdir,
      Hostname: "build",
      AttachStdout: true,
      AttachStderr: true,
      HostConfig: {
        ...(secure.engineName ? { Runtime: secure.engineName } : {}),
        NetworkMode: this.config.docker.network,
        CapDrop: ["ALL"],
        CapAdd: [...sandboxCapabilities],
        SecurityOpt: ["no-new-privileges:true", ...(isolation ? [isolation.securityOpt] : [])],
        Privileged: false,
        PidsLimit: secure.type === "gvisor" ? Math.max(4096, pids * 8) : pids,
        Memory: spec.memoryBytes,
        MemorySwap: spec.memoryBytes,
        NanoCpus: spec.cpuMillis * 1_000_000,
        Mounts: [...(networkFiles?.sandbox ?? [])],
        LogConfig: { Type: "none", Config: {} },
      },
    });
    try {
      if (spec.diskBytes && this.diskQuotas) await this.diskQuotas.attach(this.docker, name, spec.diskBytes);
    } catch (error) {
      await this.removeBuildContainer(name);
      throw error;
    }
    return { container, name };
  }

  /**
   * Build step containers of this server's instance, by the build they belong to: a server
   * stopped mid-build leaves its step's container, which the next look removes.
   */
  async buildContainers(): Promise<{ name: string; buildId: string }[]> {
    const prefix = this.buildContainerPrefix();
    const containers = await this.docker.listContainers({
      all: true,
      filters: JSON.stringify({ name: [prefix] }),
    });
    return containers
      .map((container) => (container.Names[0] ?? "").replace(/^\//, ""))
      .filter((name) => name.startsWith(prefix))
      .map((name) => ({ name, buildId: name.slice(prefix.length).replace(/-\d+$/, "") }));
  }

  private buildContainerPrefix(): string {
    return `paddock-build-${this.config.server.instance.toLowerCase()}-`;
  }

  /** Removes a build step's container with its network files and disk quota. */
  async removeBuildContainer(name: string): Promise<void> {
    await this.docker
      .getContainer(name)
      .remove({ force: true, v: true })
      .catch((error: { statusCode?: number }) => {
        if (error.statusCode !== 404) throw error;
      });
    await this.diskQuotas?.release(name);
    await this.networkFiles?.release(name);
  }

  async removeWorkload(sandboxId: string): Promise<void> {
    for (const name of [`${sandboxId}-egress`, sandboxId]) {
      const removed = this.removeContainer(name).then(() => true);
      if (await answersWithin(removed, engineRemoveBoundMs, false)) continue;
      // The engine is waiting on the container's runtime: a gVisor sandbox whose Sentry no longer
      // answers makes `runsc kill` wait without end (decision 0200). End its runsc processes here;
      // the engine's remove then finishes.
      const containerId = await this.containerIdOf(name);
      const killed = containerId ? await killRunscLeftovers(containerId) : 0;
      this.logger.warn({ sandboxId, container: name, killedRunscProcesses: killed }, "engine remove stuck");
      if (!(await answersWithin(removed, engineRemoveBoundMs, false)))
        throw new Error(
          `the engine did not remove container ${name} within ${(2 * engineRemoveBoundMs) / 1000} s`,
        );
    }
    await removeOwnedVolumes(this.docker, sandboxId);
    await this.diskQuotas?.release(sandboxId);
    await this.networkFiles?.release(sandboxId);
  }

  private async removeContainer(name: string): Promise<void> {
    const container = this.docker.getContainer(name);
    const inspected = await container.inspect().catch(() => undefined);
    if (!inspected) return;
    // A paused container cannot be killed (its frozen PID 1 looks like a zombie): thaw it first.
    if (inspected.State.Paused) await container.unpause().catch(() => undefined);
    await container.remove({ force: true, v: true }).catch((error: { statusCode?: number }) => {
      if (error.statusCode !== 404) throw error;
    });
  }

  /** A container's full id from the engine's list, which answers while the container is stuck. */
  private async containerIdOf(name: string): Promise<string | undefined> {
    const found = await this.docker.listContainers({
      all: true,
      filters: JSON.stringify({ name: [`^/${name}$`] }),
    });
    return found[0]?.Id;
  }

  /**
   * In memory: the cgroup freezer. To disk: a sandbox on gVisor's own network stack (decision
   * 0194) or on runc with a working CRIU (decision 0196) is checkpointed with its processes and
   * memory when `keepMemory`; any other is stopped, its writable layer, disk quota, network files
   * and volumes left in place, so a resume starts it again on the same files (decision 0190). Its
   * egress sidecar, which lives in its network namespace, stops first.
   */
  async pauseWorkload(
    sandboxId: string,
    options: { to: "memory" | "disk"; keepMemory?: boolean },
  ): Promise<PauseDepth> {
    const container = this.docker.getContainer(sandboxId);
    if (options.to === "memory") {
      await container.pause();
      return { to: "memory" };
    }
    if (options.keepMemory && (await this.canCheckpoint(sandboxId))) {
      await checkpointContainer(this.docker, sandboxId);
      return { to: "disk", memoryPreserved: true };
    }
    // A frozen container cannot be stopped: its processes must see the signal.
    if ((await container.inspect()).State.Paused) await container.unpause();
    const sidecar = this.docker.getContainer(`${sandboxId}-egress`);
    if (await succeeds(sidecar.inspect())) await sidecar.stop({ t: 1 }).catch(notModified);
    // tini passes SIGTERM to the sandbox's processes; what has not ended by then is killed.
    await container.stop({ t: 3 }).catch(notModified);
    return { to: "disk", memoryPreserved: false };
  }

  async resumeWorkload(sandboxId: string, options: { from: PauseDepth; execdToken: string }): Promise<void> {
    const container = this.docker.getContainer(sandboxId);
    if (options.from.to === "memory") {
      await container.unpause();
      return;
    }
    // The engine resolves the volumes' paths again at this start.
    const labels = (await container.inspect()).Config.Labels ?? {};
    await checkPathsAgain(JSON.parse(labels[checkedPathsLabel] ?? "[]") as CheckedPath[]);
    if (options.from.memoryPreserved) await restoreContainer(this.docker, sandboxId);
    else await container.start().catch(notModified);
    const sidecar = this.docker.getContainer(`${sandboxId}-egress`);
    const egress = await succeeds(sidecar.inspect());
    if (egress) await sidecar.start().catch(notModified);
    await this.serving(sandboxId, options.execdToken, egress);
  }

  /** Whether any sandbox here can be checkpointed (the engine's checkpoint API may be off). */
  private runtimeCanCheckpoint(): boolean {
    return Boolean(this.netstack) || this.runcCheckpoints === "";
  }

  /**
   * Whether this sandbox can be checkpointed: under gVisor, it runs on the netstack runtime (read
   * from the container, so a sandbox created before a change of configuration keeps its own
   * answer); under runc, CRIU works here and the sandbox has no egress sidecar. (A restored
   * sandbox's processes run at once, before a sidecar started after them could put its rules
   * back.)
   */
  private async canCheckpoint(sandboxId: string): Promise<boolean> {
    const runtime = (await this.docker.getContainer(sandboxId).inspect()).HostConfig.Runtime;
    if (this.netstack) return runtime === this.netstack.engineName;
    if (this.runcCheckpoints !== "" || (runtime ?? "runc") !== "runc") return false;
    return !(await succeeds(this.docker.getContainer(`${sandboxId}-egress`).inspect()));
  }

  async inspectWorkload(sandboxId: string): Promise<WorkloadStatus> {
    const inspected = await this.docker
      .getContainer(sandboxId)
      .inspect()
      .catch(() => undefined);
    if (!inspected) return { state: "missing" };
    const state = inspected.State;
    const address = inspected.NetworkSettings.Networks[this.config.docker.network]?.IPAddress;
    const ended = !state.Running && !state.Paused;
    const oomKilled =
      ended &&
      (await this.memoryKills.killedForMemory({
        containerId: inspected.Id,
        exitCode: state.ExitCode,
        finishedAtMs: Date.parse(state.FinishedAt),
        engineSaysOom: state.OOMKilled,
      }));
    const checkpointed =
      ended && this.runtimeCanCheckpoint() && (await hasCheckpoint(this.docker, sandboxId));
    return {
      state: state.Paused ? "paused" : state.Running ? "running" : "exited",
      containerId: inspected.Id,
      ...(address ? { address } : {}),
      ...(state.Running ? {} : { exitCode: state.ExitCode }),
      ...(oomKilled ? { oomKilled: true } : {}),
      ...(checkpointed ? { checkpointed: true } : {}),
      ...(state.Error ? { error: state.Error } : {}),
    };
  }

  async listWorkloads(): Promise<WorkloadSummary[]> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: {
        label: [
          `${managedLabel}=true`,
          `${instanceLabel}=${this.config.server.instance}`,
          `${roleLabel}=sandbox`,
        ],
      },
    });
    return containers.map((container) => ({
      sandboxId: container.Labels[sandboxLabel] ?? container.Names[0]?.replace(/^\//, "") ?? container.Id,
      containerId: container.Id,
      state: container.State === "paused" ? "paused" : container.State === "running" ? "running" : "exited",
      labels: container.Labels,
    }));
  }

  async workloadLogs(sandboxId: string, maxBytes: number): Promise<string> {
    const buffer = (await this.docker.getContainer(sandboxId).logs({
      stdout: true,
      stderr: true,
      timestamps: true,
      tail: 5000,
      follow: false,
    })) as unknown as Buffer;
    const text = demuxDockerLogs(buffer);
    return text.length > maxBytes ? text.slice(text.length - maxBytes) : text;
  }

  /** Docker pauses with the cgroup freezer and commits containers: both always available. */
  unavailable(): PaddockError | undefined {
    return undefined;
  }

  async snapshotWorkload(sandboxId: string, snapshotId: string): Promise<string> {
    if (this.snapshotProblem) throw new Error(this.snapshotProblem);
    return commitSnapshotImage(this.docker, sandboxId, snapshotId, this.config.server.instance);
  }

  async removeSnapshotImage(imageRef: string): Promise<void> {
    await this.docker
      .getImage(imageRef)
      .remove({ force: true })
      .catch((error: { statusCode?: number }) => {
        if (error.statusCode !== 404) throw error;
      });
  }
}

/**
 * How long a delete waits on the engine's remove of one container before ending its runsc
 * processes itself. A forced remove takes under 3 s on a loaded host (decision 0200's table);
 * a stuck one never ends.
 */
const engineRemoveBoundMs = 15_000;

/** Docker answers 304 to stopping a stopped container or starting a started one: already done. */
function notModified(error: { statusCode?: number }): void {
  if (error.statusCode !== 304) throw error;
}

/** `promise`'s value, or `otherwise` when it has not settled within `ms`. */
async function answersWithin<T>(promise: Promise<T>, ms: number, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(otherwise), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function parseEvent(
  line: string,
): { sandboxId: string; containerId: string; action: string; atMs: number } | undefined {
  try {
    const event = JSON.parse(line) as {
      Action?: string;
      timeNano?: number;
      Actor?: { ID?: string; Attributes?: Record<string, string> };
    };
    const sandboxId = event.Actor?.Attributes?.[sandboxLabel];
    const containerId = event.Actor?.ID;
    if (!sandboxId || !containerId || !event.Action) return undefined;
    return { sandboxId, containerId, action: event.Action, atMs: (event.timeNano ?? 0) / 1e6 };
  } catch {
    return undefined;
  }
}

function registryOf(uri: string): string {
  const first = uri.split("/")[0] ?? "";
  return uri.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")
    ? first
    : "https://index.docker.io/v1/";
}
