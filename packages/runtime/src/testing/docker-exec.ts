import Docker from "dockerode";
import { demuxDockerLogs } from "../docker/logs.js";

const docker = new Docker();

/**
 * Runs a command inside a sandbox's container through the engine (like `docker exec`), for tests
 * that must look at the sandbox from the inside independently of execd.
 */
export async function dockerExec(
  containerName: string,
  command: string[],
  options: { timeoutMs?: number } = {},
): Promise<{ exitCode: number; output: string }> {
  const exec = await docker.getContainer(containerName).exec({
    Cmd: command,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`${command.join(" ")} did not finish within ${options.timeoutMs ?? 30_000} ms`));
    }, options.timeoutMs ?? 30_000);
    stream.on("end", () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on("error", reject);
  });
  const { ExitCode } = await exec.inspect();
  return { exitCode: ExitCode ?? -1, output: demuxDockerLogs(Buffer.concat(chunks)) };
}

/** Runs `script` with bash inside the sandbox. */
export function bashIn(containerName: string, script: string, timeoutMs?: number) {
  return dockerExec(containerName, ["bash", "-c", script], timeoutMs === undefined ? {} : { timeoutMs });
}

export { docker as testDocker };
