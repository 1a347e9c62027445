import { randomUUID } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, readdir, rename, rm, stat, statfs } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Route } from "../http/router.js";
import { type CallContext, ConnectError, connectRoutes, keepaliveMs, type Message } from "./connect.js";
import { type FileMetadataStore, resolvedParent } from "./file-metadata.js";
import { entryInfo } from "./files-entry.js";
import { Accounts, ensureDirectory, resolvePath } from "./files-user.js";
import { DirectoryWatch, type WatchEvent } from "./watch-tree.js";

/** A listing larger than this is refused rather than built in memory. */
const maxListEntries = 100_000;
/** Watchers polled with GetWatcherEvents that one sandbox may hold at once. */
const maxPollingWatchers = 1000;

function text(request: Message, name: string): string {
  const value = request[name] ?? "";
  if (typeof value !== "string") throw new ConnectError("invalid_argument", `${name} must be a string`);
  return value;
}

function flag(request: Message, name: string): boolean {
  const value = request[name] ?? false;
  if (typeof value !== "boolean") throw new ConnectError("invalid_argument", `${name} must be a boolean`);
  return value;
}

/** A uint32 field: a JSON number, or a string of digits as protobuf's JSON mapping also allows. */
function count(request: Message, name: string): number {
  const value = request[name] ?? 0;
  const number = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > 0xffffffff)
    throw new ConnectError("invalid_argument", `${name} must be a non-negative integer`);
  return number;
}

/** The call's user and its path field resolved, with the accounts to name owners by. */
async function target(request: Message, context: CallContext, field = "path") {
  const accounts = await Accounts.read();
  const user = accounts.user(context.user);
  return { accounts, user, path: resolvePath(text(request, field), user) };
}

/** Runs a filesystem step, answering a missing path with `message`, as envd words it. */
async function orNotFound<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new ConnectError("not_found", message);
    throw error;
  }
}

/**
 * Filesystems whose changes a watch may miss, by statfs magic number (linux/magic.h): NFS, CIFS,
 * SMB, SMB2 and FUSE, which envd (0.6.4) watches only when the client allows network mounts.
 */
const networkFilesystems = new Map([
  [0x6969, "NFS"],
  [0xff534d42, "CIFS"],
  [0x517b, "SMB"],
  [0xfe534d42, "SMB2"],
  [0x65735546, "FUSE"],
]);

/** The network filesystem a statfs type names, if it is one. */
export function networkFilesystem(type: number): string | undefined {
  // statfs's f_type is a signed long where some C libraries sign-extend it.
  return networkFilesystems.get(type >>> 0);
}

/** The watched directory, or why it cannot be watched. */
async function watchable(path: string, allowNetworkMounts: boolean): Promise<void> {
  const stats = await orNotFound(stat(path), `path ${path} not found`);
  if (!stats.isDirectory()) throw new ConnectError("invalid_argument", `path ${path} is not a directory`);
  const network = networkFilesystem((await statfs(path)).type);
  if (network && !allowNetworkMounts)
    throw new ConnectError(
      "invalid_argument",
      `cannot watch path on network filesystem (${network}): ${path}; set allowNetworkMounts to watch it, events may be missed`,
    );
}

/** A watch polled with GetWatcherEvents, and whether its events carry their entries. */
interface PollingWatcher {
  watch: DirectoryWatch;
  includeEntry: boolean;
  accounts: Accounts;
}

/**
 * E2B's `filesystem.Filesystem` service (specs/e2b/envd/filesystem/filesystem.proto) over
 * Connect: paths resolve against the call's user's home, and what it creates belongs to that user.
 */
export class EnvdFilesystem {
  private readonly pollingWatchers = new Map<string, PollingWatcher>();
  private readonly streamingWatches = new Set<DirectoryWatch>();

  constructor(private readonly metadata: FileMetadataStore) {}

  routes(prefix: string): Route[] {
    return connectRoutes(prefix, "filesystem.Filesystem", {
      unary: {
        Stat: async (request, context) => {
          const { accounts, path } = await target(request, context);
          return { entry: await orNotFound(this.describe(path, accounts), `file not found: ${path}`) };
        },
        MakeDir: async (request, context) => {
          const { accounts, user, path } = await target(request, context);
          const existing = await stat(path).catch(() => undefined);
          if (existing?.isDirectory())
            throw new ConnectError("already_exists", `directory already exists: ${path}`);
          if (existing)
            throw new ConnectError(
              "invalid_argument",
              `path already exists but it is not a directory: ${path}`,
            );
          await ensureDirectory(path, user);
          return { entry: await this.describe(path, accounts) };
        },
        Move: async (request, context) => {
          const { accounts, user, path: source } = await target(request, context, "source");
          const destination = resolvePath(text(request, "destination"), user);
          const missing = `source file not found: ${source}`;
          // Checked first so that a failed move leaves no directories behind.
          await orNotFound(lstat(source), missing);
          await ensureDirectory(dirname(destination), user);
          const from = await resolvedParent(source);
          await orNotFound(rename(source, destination), missing);
          await this.metadata.moved(from, await resolvedParent(destination));
          return { entry: await this.describe(destination, accounts) };
        },
        ListDir: async (request, context) => {
          const { accounts, path } = await target(request, context);
          return { entries: await this.list(path, count(request, "depth") || 1, accounts) };
        },
        Remove: async (request, context) => {
          const { path } = await target(request, context);
          if (path === "/") throw new ConnectError("invalid_argument", "refusing to remove /");
          const resolved = await resolvedParent(path);
          // A missing path is no error: envd removes as `rm -rf` does.
          await rm(path, { recursive: true, force: true });
          await this.metadata.removed(resolved);
          return {};
        },
        CreateWatcher: async (request, context) => {
          const { accounts, path } = await target(request, context);
          if (this.pollingWatchers.size >= maxPollingWatchers)
            throw new ConnectError(
              "resource_exhausted",
              `${maxPollingWatchers} watchers exist already; remove some with RemoveWatcher`,
            );
          await watchable(path, flag(request, "allowNetworkMounts"));
          const includeEntry = flag(request, "includeEntry");
          const watch = await DirectoryWatch.open(path, flag(request, "recursive"));
          const watcherId = randomUUID();
          this.pollingWatchers.set(watcherId, { watch, includeEntry, accounts });
          return { watcherId };
        },
        GetWatcherEvents: async (request) => {
          const watcherId = text(request, "watcherId");
          const watcher = this.pollingWatchers.get(watcherId);
          if (!watcher) throw new ConnectError("not_found", `watcher ${watcherId} not found`);
          try {
            const events = watcher.watch.take();
            return {
              events: await Promise.all(
                events.map((event) => this.event(event, watcher.includeEntry, watcher.accounts)),
              ),
            };
          } catch (error) {
            // The watch ended (its directory went away, or nobody read its events): so does the watcher.
            this.pollingWatchers.delete(watcherId);
            throw error;
          }
        },
        RemoveWatcher: async (request) => {
          const watcherId = text(request, "watcherId");
          const watcher = this.pollingWatchers.get(watcherId);
          if (!watcher) throw new ConnectError("not_found", `watcher ${watcherId} not found`);
          watcher.watch.close();
          this.pollingWatchers.delete(watcherId);
          return {};
        },
      },
      stream: {
        WatchDir: async (request, context, send) => {
          const { accounts, path } = await target(request, context);
          await watchable(path, flag(request, "allowNetworkMounts"));
          const includeEntry = flag(request, "includeEntry");
          const watch = await DirectoryWatch.open(path, flag(request, "recursive"));
          this.streamingWatches.add(watch);
          const stop = () => watch.close();
          context.signal.addEventListener("abort", stop);
          if (context.signal.aborted) stop();
          const keepalive = setInterval(
            () => send({ keepalive: {} }).catch(() => undefined),
            keepaliveMs(context.headers),
          );
          try {
            await send({ start: {} });
            for (let events = await watch.next(); events; events = await watch.next()) {
              for (const event of events)
                await send({ filesystem: await this.event(event, includeEntry, accounts) });
            }
          } finally {
            clearInterval(keepalive);
            context.signal.removeEventListener("abort", stop);
            watch.close();
            this.streamingWatches.delete(watch);
          }
        },
      },
    });
  }

  closeAll(): void {
    for (const { watch } of this.pollingWatchers.values()) watch.close();
    for (const watch of this.streamingWatches) watch.close();
    this.pollingWatchers.clear();
    this.streamingWatches.clear();
  }

  private async event(event: WatchEvent, includeEntry: boolean, accounts: Accounts): Promise<Message> {
    const message: Message = { name: event.name, type: event.type };
    if (includeEntry) {
      // Only while the entry exists: not for what was removed or moved away.
      const entry = await this.describe(event.path, accounts).catch(() => undefined);
      if (entry) message.entry = entry;
    }
    return message;
  }

  /** envd's EntryInfo of `path` with the file's metadata (envd 0.6.2), when it has some. */
  private async describe(path: string, accounts: Accounts, stats?: Stats): Promise<Message> {
    const own = stats ?? (await lstat(path));
    const entry = await entryInfo(path, accounts, own);
    const metadata = await this.metadata.get(path, own);
    if (metadata) entry.metadata = metadata;
    return entry;
  }

  /**
   * `root`'s entries down to `depth` levels, as envd lists them: depth-first in name order, the
   * root's symlink followed but none below it, paths under the path the client named.
   */
  private async list(root: string, depth: number, accounts: Accounts): Promise<Message[]> {
    if (!(await orNotFound(stat(root), `directory not found: ${root}`)).isDirectory())
      throw new ConnectError("invalid_argument", `path is not a directory: ${root}`);
    const entries: Message[] = [];
    const walk = async (dir: string, level: number): Promise<void> => {
      const names = (await readdir(dir).catch(() => [] as string[])).sort((a, b) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      const described = await Promise.all(
        names.map(async (name) => {
          const path = join(dir, name);
          const stats = await lstat(path).catch(() => undefined);
          return stats && { path, stats, entry: await this.describe(path, accounts, stats) };
        }),
      );
      for (const item of described) {
        if (!item) continue;
        if (entries.length >= maxListEntries)
          throw new ConnectError(
            "resource_exhausted",
            `${root} holds more than ${maxListEntries} entries within depth ${depth}; list a smaller depth`,
          );
        entries.push(item.entry);
        if (item.stats.isDirectory() && level < depth) await walk(item.path, level + 1);
      }
    };
    await walk(root, 1);
    return entries;
  }
}
