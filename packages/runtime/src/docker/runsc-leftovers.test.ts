import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { afterEach, describe, expect, test } from "vitest";
import { killRunscLeftovers } from "./runsc-leftovers.js";

/** A process that waits, with `args` on its command line as a runsc or shim process has them. */
function waiter(...args: string[]): ChildProcess {
  return spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ...args], { stdio: "ignore" });
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

describe("killRunscLeftovers", () => {
  test("kills the runsc processes naming the container's id, and no other", async () => {
    const id = randomBytes(32).toString("hex");
    const other = randomBytes(32).toString("hex");
    const sandbox = waiter(
      "runsc-sandbox",
      "--root=/var/run/docker/runtime-runc/moby",
      "boot",
      `--bundle=/b/${id}`,
    );
    const kill = waiter("/usr/local/lib/paddock/runsc", "--root", "/r", "kill", id, "9");
    const shim = waiter("/usr/bin/containerd-shim-runc-v2", "-namespace", "moby", "-id", id);
    const another = waiter("runsc-gofer", "gofer", `--bundle=/b/${other}`);
    started.push(sandbox, kill, shim, another);
    await Promise.all(started.map((child) => once(child, "spawn")));

    const ended = Promise.all([sandbox, kill].map((child) => once(child, "exit")));
    expect(await killRunscLeftovers(id)).toBe(2);
    expect((await ended).map(([, signal]) => signal)).toEqual(["SIGKILL", "SIGKILL"]);
    expect([shim.exitCode, shim.signalCode, another.exitCode, another.signalCode]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });
});
