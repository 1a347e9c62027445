import { spawn } from "node:child_process";

/** Runs one nft transaction (`nft -f -`): all of it applies, or none of it. */
export function runNft(script: string, binary = process.env.PADDOCK_EGRESS_NFT ?? "nft"): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ["-f", "-"], { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`nft exited with ${code}: ${stderr.trim()}`));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(script);
  });
}

/** Serialises transactions so rule rebuilds and set updates never interleave. */
export class NftQueue {
  private tail: Promise<unknown> = Promise.resolve();
  constructor(private readonly run: (script: string) => Promise<void> = runNft) {}

  apply(script: string): Promise<void> {
    const next = this.tail.then(() => this.run(script));
    this.tail = next.catch(() => undefined);
    return next;
  }
}
