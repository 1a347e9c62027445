import { type FSWatcher, type Stats, watch } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import { ConnectError } from "./connect.js";

export type EventType =
  | "EVENT_TYPE_CREATE"
  | "EVENT_TYPE_WRITE"
  | "EVENT_TYPE_REMOVE"
  | "EVENT_TYPE_RENAME"
  | "EVENT_TYPE_CHMOD";

export interface WatchEvent {
  /** Relative to the watched directory, as envd names it ("sub/file.txt" when recursive). */
  name: string;
  path: string;
  type: EventType;
}

interface RawEvent {
  dir: string;
  kind: string;
  name: string;
}

/** Events held for a reader that does not keep up, before the watch gives up on it. */
const maxPendingEvents = 100_000;

/**
 * Watches a directory (and with `recursive` every directory below it) with one non-recursive
 * `fs.watch` per directory, as envd's inotify watcher does. (Node's own recursive mode on Linux
 * watches every file and reads the tree synchronously, and reports each existing file as new.)
 *
 * fs.watch reduces inotify's events to "rename" (an entry appeared or went) and "change" (its
 * content or attributes changed), so the watch keeps the names it knows in each directory to tell
 * which: a "rename" of an unknown name is a creation, of a known one a removal, unless the name
 * still exists and nothing else happened to it in the same batch (a move onto it replaced it).
 * inotify delivers a move's two halves back to back, so a removal followed directly by a creation
 * is reported as a rename, as envd reports the name moved away. A "change" is a write when the
 * modification time moved with the change time, else an attribute change (chmod, chown).
 */
export class DirectoryWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly names = new Map<string, Set<string>>();
  private raw: RawEvent[] = [];
  private rawCount = 0;
  private ready: WatchEvent[] = [];
  /** Batches are handled one after another, after the initial scan. */
  private chain: Promise<void> = Promise.resolve();
  private scheduled = false;
  private failure: Error | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  private constructor(
    readonly root: string,
    private readonly recursive: boolean,
  ) {}

  /** Starts watching `root`, an existing directory; fails as fs.watch does (ENOENT, ENOSPC…). */
  static async open(root: string, recursive: boolean): Promise<DirectoryWatch> {
    const watch = new DirectoryWatch(root, recursive);
    watch.chain = watch.add(root);
    try {
      await watch.chain;
    } catch (error) {
      watch.close();
      throw error;
    }
    return watch;
  }

  /** The events so far (none when there are none), or the failure that ended the watch. */
  take(): WatchEvent[] {
    const events = this.ready;
    if (events.length === 0 && this.failure) throw this.failure;
    this.ready = [];
    return events;
  }

  /** The next events, waiting for some; undefined once closed. */
  async next(): Promise<WatchEvent[] | undefined> {
    for (;;) {
      if (this.ready.length > 0 || this.failure) return this.take();
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.names.clear();
    this.wake?.();
  }

  private fail(error: unknown): void {
    if (this.closed) return;
    this.failure = error instanceof Error ? error : new Error(String(error));
    this.close();
  }

  private onRaw(dir: string, kind: string, name: string | null): void {
    if (this.closed || name === null) return;
    this.raw.push({ dir, kind, name });
    this.rawCount++;
    if (this.rawCount + this.ready.length > maxPendingEvents) {
      this.fail(
        new ConnectError(
          "resource_exhausted",
          `more than ${maxPendingEvents} filesystem events are waiting for the client to read them`,
        ),
      );
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    // What one read of the inotify queue delivers arrives before this runs: one batch.
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.raw;
      this.raw = [];
      this.chain = this.chain
        .then(() => this.handle(batch))
        .catch((error) => this.fail(error))
        .finally(() => {
          this.rawCount -= batch.length;
        });
    });
  }

  private async handle(batch: RawEvent[]): Promise<void> {
    const lastRename = new Map<string, number>();
    batch.forEach((raw, index) => {
      if (raw.kind === "rename") lastRename.set(join(raw.dir, raw.name), index);
    });
    const events: WatchEvent[] = [];
    for (const [index, raw] of batch.entries()) {
      const names = this.names.get(raw.dir);
      if (this.closed) return;
      // Its directory went away meanwhile.
      if (!names) continue;
      const path = join(raw.dir, raw.name);
      if (raw.kind !== "rename") {
        const stats = await lstat(path).catch(() => undefined);
        if (!stats) continue;
        names.add(raw.name);
        this.push(events, path, stats.ctimeMs > stats.mtimeMs ? "EVENT_TYPE_CHMOD" : "EVENT_TYPE_WRITE");
        continue;
      }
      // inotify names a watched directory's own removal by the directory's name.
      if (raw.name === basename(raw.dir) && !(await lstat(raw.dir).catch(() => undefined))) {
        if (raw.dir === this.root)
          throw new ConnectError("not_found", `the watched directory ${this.root} was removed`);
        continue;
      }
      let stats: Stats | undefined;
      let appeared = !names.has(raw.name);
      if (!appeared && (lastRename.get(path) ?? index) <= index) {
        stats = await lstat(path).catch(() => undefined);
        appeared = stats !== undefined;
      }
      if (appeared) {
        names.add(raw.name);
        this.push(events, path, "EVENT_TYPE_CREATE");
        stats ??= this.recursive ? await lstat(path).catch(() => undefined) : undefined;
        if (this.recursive && stats?.isDirectory()) await this.add(path, events);
      } else {
        names.delete(raw.name);
        this.push(events, path, "EVENT_TYPE_REMOVE");
        this.drop(path);
      }
    }
    for (const [index, event] of events.entries()) {
      const following = events[index + 1];
      if (event.type === "EVENT_TYPE_REMOVE" && following?.type === "EVENT_TYPE_CREATE")
        event.type = "EVENT_TYPE_RENAME";
    }
    if (events.length === 0 || this.closed) return;
    this.ready.push(...events);
    this.wake?.();
  }

  private push(events: WatchEvent[], path: string, type: EventType): void {
    const last = events.at(-1);
    // A large write is many write(2) calls: one event per batch says it.
    if (type === "EVENT_TYPE_WRITE" && last?.path === path && last.type === type) return;
    events.push({ name: relative(this.root, path), path, type });
  }

  /**
   * Watches `dir` and learns its names (and with `recursive` its subdirectories'). A directory
   * that appeared while watched may have entries already: `events` receives them as created.
   */
  private async add(dir: string, events?: WatchEvent[]): Promise<void> {
    if (this.closed || this.watchers.has(dir)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (kind, name) => this.onRaw(dir, kind, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Gone again, or replaced by a file, before it could be watched.
      if (dir !== this.root && (code === "ENOENT" || code === "ENOTDIR")) return;
      throw error;
    }
    watcher.on("error", (error) => (dir === this.root ? this.fail(error) : this.drop(dir)));
    this.watchers.set(dir, watcher);
    const names = new Set<string>();
    this.names.set(dir, names);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      names.add(entry.name);
      const path = join(dir, entry.name);
      if (events) this.push(events, path, "EVENT_TYPE_CREATE");
      if (this.recursive && entry.isDirectory()) await this.add(path, events);
    }
  }

  /** Stops watching a directory that went away, and everything below it. */
  private drop(path: string): void {
    if (!this.watchers.has(path)) return;
    const below = `${path}/`;
    for (const [dir, watcher] of this.watchers) {
      if (dir !== path && !dir.startsWith(below)) continue;
      watcher.close();
      this.watchers.delete(dir);
      this.names.delete(dir);
    }
  }
}
