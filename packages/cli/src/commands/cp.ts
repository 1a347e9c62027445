import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream, type Stats } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { basename, dirname, join, posix, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Command } from "commander";
import { NotFoundError, Sandbox } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { CliError, usageError } from "../output.js";
import { shellQuote } from "../shell-quote.js";
import { withProgress } from "../transfer-progress.js";

type Location = { kind: "local"; path: string } | { kind: "sandbox"; id: string; path: string };

/**
 * Transfers take as long as they take: an upload is answered only once all of it has arrived, so
 * its request gets the timer's maximum, not the SDK's 60 s.
 */
const transfer = { requestTimeoutMs: 2 ** 31 - 1 };

/** `paddock cp SRC DST`, one side `ID:/path`, as docker cp. */
export function registerCpCommand(program: Command): void {
  program
    .command("cp")
    .description("copy a file or a directory between this machine and a sandbox")
    .argument("<source>", "a local path, ID:/path in a sandbox, or - for stdin")
    .argument("<destination>", "a local path, ID:/path in a sandbox, or - for stdout")
    .addHelpText(
      "after",
      `
Copying into an existing directory puts the copy inside it, as docker cp does.
A file is streamed, with a progress bar on stderr when stderr is a terminal.
A directory travels as a tar archive through the sandbox's /tmp; with - as the destination,
a sandbox directory is written to stdout as that tar archive, a file as its bytes.

  paddock cp data.csv sbx-123:/work/          upload into /work
  paddock cp sbx-123:/work/out.png .          download into the current directory
  paddock cp sbx-123:/work/results ./results  a whole directory`,
    )
    .action(async (source: string, destination: string, _options, command: Command) => {
      const from = locate(source);
      const to = locate(destination);
      const connection = () => connectionOf(command.optsWithGlobals<GlobalOptions>());
      if (from.kind === "local" && to.kind === "sandbox")
        await upload(from.path, await Sandbox.connect(to.id, connection()), to.path);
      else if (from.kind === "sandbox" && to.kind === "local")
        await download(await Sandbox.connect(from.id, connection()), from.path, to.path);
      else throw usageError("one side of cp is a sandbox path (ID:/path), the other a local path or -");
    });
}

/** `ID:/path` names a sandbox path (a local path with a colon is written `./a:b`). */
function locate(spec: string): Location {
  const match = /^([A-Za-z0-9][A-Za-z0-9_-]*):(.*)$/.exec(spec);
  if (!match) return { kind: "local", path: spec };
  const [, id = "", path = ""] = match;
  if (!path.startsWith("/")) throw usageError(`a sandbox path is absolute: ${id}:/path, not ${spec}`);
  return { kind: "sandbox", id, path };
}

async function upload(localPath: string, sandbox: Sandbox, remotePath: string): Promise<void> {
  if (localPath === "-") {
    if (remotePath.endsWith("/")) throw usageError("name the sandbox file that stdin is written to");
    await sandbox.files.write(remotePath, withProgress(process.stdin, "stdin", undefined), transfer);
    return;
  }
  const stats = await localStat(localPath);
  if (!stats) throw new CliError(`no such file or directory: ${localPath}`, "file_not_found");
  const into = remotePath.endsWith("/") || (await remoteEntry(sandbox, remotePath))?.type === "directory";
  if (stats.isDirectory()) {
    await uploadDirectory(sandbox, resolve(localPath), remotePath, into);
    return;
  }
  const target = into ? posix.join(remotePath, basename(localPath)) : remotePath;
  await sandbox.files.write(
    target,
    withProgress(createReadStream(localPath, { highWaterMark: 2 ** 20 }), basename(localPath), stats.size),
    {
      ...transfer,
      // The permission digits as the API takes them (755 for rwxr-xr-x), as docker cp keeps them.
      mode: Number((stats.mode & 0o777).toString(8)),
    },
  );
}

async function download(sandbox: Sandbox, remotePath: string, localPath: string): Promise<void> {
  const entry = await remoteEntry(sandbox, remotePath);
  if (entry?.type === "directory") {
    await downloadDirectory(sandbox, remotePath, localPath);
    return;
  }
  const name = posix.basename(remotePath);
  const stream = await sandbox.files.read(remotePath, { format: "stream", ...transfer });
  const bytes = withProgress(stream, name, entry?.type === "file" ? entry.size : undefined);
  if (localPath === "-") {
    await pipeline(bytes, process.stdout, { end: false });
    return;
  }
  const target = (await localStat(localPath))?.isDirectory() ? join(localPath, name) : localPath;
  // A deep write buffer lets the disk and the network work side by side instead of in turns.
  await pipeline(bytes, createWriteStream(target, { highWaterMark: 8 * 2 ** 20 })).catch(
    async (error: NodeJS.ErrnoException) => {
      // No half-written file is left behind.
      await rm(target, { force: true });
      if (error.code === "ENOENT")
        throw new CliError(`no such directory: ${dirname(target)}`, "file_not_found");
      throw error;
    },
  );
}

/**
 * Tars the directory here, streams the archive to the sandbox and unpacks it there: into
 * `remotePath` when that is a directory already, else as `remotePath` itself.
 */
async function uploadDirectory(sandbox: Sandbox, localDir: string, remotePath: string, into: boolean) {
  const archive = `/tmp/.paddock-cp-${randomUUID()}.tar`;
  const tar = spawn("tar", ["-C", dirname(localDir), "-cf", "-", basename(localDir)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    await Promise.all([
      sandbox.files.write(archive, withProgress(tar.stdout, `${basename(localDir)}/`, undefined), transfer),
      succeeded(tar),
    ]);
  } catch (error) {
    tar.kill(); // nobody reads its output any more
    throw error;
  }
  const unpack = [
    `mkdir -p ${shellQuote(remotePath)}`,
    `tar --no-same-owner -xf ${shellQuote(archive)} -C ${shellQuote(remotePath)}${into ? "" : " --strip-components=1"}`,
  ].join(" && ");
  await sandbox.commands.run(`${unpack}; status=$?; rm -f ${shellQuote(archive)}; exit $status`, transfer);
}

/** Tars the directory in the sandbox, streams the archive here and unpacks it (or writes it to stdout). */
async function downloadDirectory(sandbox: Sandbox, remoteDir: string, localPath: string) {
  const archive = `/tmp/.paddock-cp-${randomUUID()}.tar`;
  const name = posix.basename(remoteDir);
  await sandbox.commands.run(
    `tar -C ${shellQuote(posix.dirname(remoteDir))} -cf ${shellQuote(archive)} ${shellQuote(name)}`,
    transfer,
  );
  try {
    const bytes = withProgress(
      await sandbox.files.read(archive, { format: "stream", ...transfer }),
      `${name}/`,
      undefined,
    );
    if (localPath === "-") {
      await pipeline(bytes, process.stdout, { end: false });
      return;
    }
    const into = (await localStat(localPath))?.isDirectory() ?? false;
    if (!into) await mkdir(localPath);
    const tar = spawn("tar", ["-xf", "-", "-C", localPath, ...(into ? [] : ["--strip-components=1"])], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    await Promise.all([pipeline(bytes, tar.stdin), succeeded(tar)]);
  } finally {
    await sandbox.files.remove(archive);
  }
}

/** The local file's stats, or undefined when there is none. */
async function localStat(path: string): Promise<Stats | undefined> {
  return stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
}

/** What the sandbox has at `path` (from a listing of its directory), or undefined. */
async function remoteEntry(
  sandbox: Sandbox,
  path: string,
): Promise<{ type: string; size: number } | undefined> {
  const normalized = posix.normalize(path).replace(/(.)\/$/, "$1");
  if (normalized === "/") return { type: "directory", size: 0 };
  const entries = await sandbox.files.list(posix.dirname(normalized)).catch((error: unknown) => {
    if (error instanceof NotFoundError) return [];
    throw error;
  });
  return entries.find((entry) => entry.path === normalized);
}

function succeeded(child: ChildProcess): Promise<void> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve();
      else reject(new CliError(`tar failed: ${stderr.trim() || `exit code ${code}`}`, "tar_failed"));
    });
  });
}
