import { request } from "node:http";

/** One GET; resolves with the status code, or undefined when nothing answered. */
export function probe(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 1000,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { method: "GET", headers, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}

/**
 * Polls `url` until it answers 200 (or a status `accept` takes). Every 25 failed probes it asks
 * `stillAlive`, so a sandbox whose process died fails fast instead of waiting for the whole timeout.
 */
export async function waitForHttp(
  url: string,
  options: {
    headers?: Record<string, string>;
    timeoutMs: number;
    intervalMs?: number;
    signal?: AbortSignal | undefined;
    stillAlive?: () => Promise<string | undefined>;
    accept?: (status: number) => boolean;
  },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 10;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    const status = await probe(url, options.headers, 1000);
    if (status !== undefined && (options.accept ? options.accept(status) : status === 200)) return;
    if (Date.now() > deadline)
      throw new Error(`${new URL(url).host} did not answer within ${options.timeoutMs} ms`);
    if (options.stillAlive && attempt % 25 === 0) {
      const problem = await options.stillAlive();
      if (problem) throw new Error(problem);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
