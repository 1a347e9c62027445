import { createHash, randomBytes } from "node:crypto";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { userConnection } from "../../../test/support/user.js";
import { type CommandEvent, CommandExitError, NotFoundError, PaddockError, Sandbox } from "../src/index.js";

const mebibyte = 2 ** 20;

/** `size` random bytes, produced a chunk at a time (never held whole), with their sha256 once read. */
function randomSource(size: number, chunkSize = mebibyte) {
  const hash = createHash("sha256");
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= size) {
        controller.close();
        return;
      }
      const chunk = randomBytes(Math.min(chunkSize, size - produced));
      produced += chunk.length;
      hash.update(chunk);
      controller.enqueue(chunk);
    },
  });
  let digest: string | undefined;
  return { stream, digest: () => (digest ??= hash.digest("hex")) };
}

async function digestOf(stream: ReadableStream<Uint8Array>): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest("hex"), size };
}

async function collect(events: AsyncIterable<CommandEvent>): Promise<CommandEvent[]> {
  const seen: CommandEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe("the TypeScript SDK's streams: files and commands", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string };
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer();
    connection = await userConnection(t, "streaming");
    sandbox = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("64 MiB written from a stream and read back as a stream are the same bytes", async () => {
    const source = randomSource(64 * mebibyte);
    const written = await sandbox.files.write("/tmp/big.bin", source.stream);
    expect(written).toEqual({ path: "/tmp/big.bin", size: 64 * mebibyte });
    const stream = await sandbox.files.read("/tmp/big.bin", { format: "stream" });
    expect(stream).toBeInstanceOf(ReadableStream);
    expect(await digestOf(stream)).toEqual({ sha256: source.digest(), size: 64 * mebibyte });
    const inSandbox = await sandbox.commands.run("sha256sum /tmp/big.bin");
    expect(inSandbox.stdout.split(" ")[0]).toBe(source.digest());
  });

  test("a 384 MiB file goes up and comes back without this process holding it", async () => {
    // Sampled while the bytes flow: buffers of this process (client and in-process server alike).
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 20);
    try {
      const source = randomSource(384 * mebibyte);
      // Under /root, on disk: under gVisor /tmp is a tmpfs in the sandbox's memory.
      expect((await sandbox.files.write("/root/huge.bin", source.stream)).size).toBe(384 * mebibyte);
      const back = await digestOf(await sandbox.files.read("/root/huge.bin", { format: "stream" }));
      expect(back).toEqual({ sha256: source.digest(), size: 384 * mebibyte });
    } finally {
      clearInterval(sampler);
    }
    // Half the file: Node 24 frees a buffer when its wrapper leaves the young generation, which
    // grows with the allocation rate (137 MiB seen once; never near the 384 MiB held whole).
    expect(peak).toBeLessThan(192 * mebibyte);
    await sandbox.files.remove("/root/huge.bin");
  });

  test("write takes an async iterable and a Blob; read keeps text and bytes", async () => {
    async function* lines() {
      for (let line = 1; line <= 3; line++) yield new TextEncoder().encode(`line ${line}\n`);
    }
    expect((await sandbox.files.write("/tmp/lines.txt", lines())).size).toBe(21);
    expect(await sandbox.files.read("/tmp/lines.txt")).toBe("line 1\nline 2\nline 3\n");
    const bytes = new Uint8Array([0, 255, 1, 254]);
    await sandbox.files.write("/tmp/blob.bin", new Blob([bytes]));
    expect(await sandbox.files.read("/tmp/blob.bin", { format: "bytes" })).toEqual(bytes);
  });

  test("reading a missing file as a stream fails with the server's code", async () => {
    const failure = await sandbox.files.read("/tmp/absent", { format: "stream" }).catch((error) => error);
    expect(failure).toBeInstanceOf(NotFoundError);
    expect(failure).toMatchObject({ code: "file_not_found" });
  });

  test("commands.stream yields output as it comes, then the exit code, non-zero included", async () => {
    const arrivals: Array<{ event: CommandEvent; at: number }> = [];
    for await (const event of sandbox.commands.stream("echo out; echo err >&2; sleep 2; echo done; exit 4")) {
      arrivals.push({ event, at: Date.now() });
    }
    const events = arrivals.map(({ event }) => event);
    expect(events.filter((event) => event.type === "stdout").map((event) => event.text)).toEqual([
      "out\n",
      "done\n",
    ]);
    expect(events).toContainEqual({ type: "stderr", text: "err\n" });
    expect(events.at(-1)).toEqual({ type: "exit", exitCode: 4 });
    // The first line arrived while the command was still sleeping.
    const first = arrivals.find(({ event }) => event.type === "stdout");
    expect((arrivals.at(-1)?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThan(1500);
    expect(await collect(sandbox.commands.stream("true", { cwd: "/tmp" }))).toEqual([
      { type: "exit", exitCode: 0 },
    ]);
    expect(
      await collect(sandbox.commands.stream("printf %s:%s $PWD $WHO", { cwd: "/tmp", envs: { WHO: "me" } })),
    ).toEqual([
      { type: "stdout", text: "/tmp:me" },
      { type: "exit", exitCode: 0 },
    ]);
  });

  test("run with callbacks rides on the stream and still throws on a non-zero exit", async () => {
    const seen: string[] = [];
    const failure = await sandbox.commands
      .run("echo a; echo b >&2; exit 2", {
        onStdout: (text) => seen.push(`out:${text}`),
        onStderr: (text) => seen.push(`err:${text}`),
      })
      .catch((error) => error);
    expect(failure).toBeInstanceOf(CommandExitError);
    expect(failure).toMatchObject({ exitCode: 2, stdout: "a\n", stderr: "b\n" });
    expect(seen.sort()).toEqual(["err:b\n", "out:a\n"]);
  });

  test("the request timeout bounds the wait for a stream to start, not how long it runs", async () => {
    const events: CommandEvent[] = [];
    for await (const event of sandbox.commands.stream("echo one; sleep 2; echo two", {
      requestTimeoutMs: 1000,
    }))
      events.push(event);
    expect(events.at(-1)).toEqual({ type: "exit", exitCode: 0 });
    expect(
      events
        .filter((event) => event.type === "stdout")
        .map((event) => event.text)
        .join(""),
    ).toBe("one\ntwo\n");
  });

  test("a stream whose sandbox is killed mid-command ends with a PaddockError within seconds", async () => {
    const doomed = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
    const events: CommandEvent[] = [];
    let killedAt = 0;
    const failure = await (async () => {
      for await (const event of doomed.commands.stream("echo started; sleep 600")) {
        events.push(event);
        if (!killedAt) {
          killedAt = Date.now();
          await Sandbox.kill(doomed.id, connection);
        }
      }
    })().catch((error: unknown) => error);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(events).toEqual([{ type: "stdout", text: "started\n" }]);
    expect(failure).toBeInstanceOf(PaddockError);
    expect(failure).not.toBeInstanceOf(CommandExitError);
    // The server's own report (its code), not a stream that merely broke off.
    expect((failure as PaddockError).code).toMatch(/^[a-z_]+$/);
    expect((failure as PaddockError).code).not.toBe("connection_failed");
    expect((failure as PaddockError).message).not.toBe("");
  });
});
