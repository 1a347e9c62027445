import { describe, expect, test } from "vitest";
import { MemoryKills } from "./memory-kills.js";

const ended = (
  overrides: Partial<{ exitCode: number; finishedAtMs: number; engineSaysOom: boolean }> = {},
) => ({
  containerId: "c1",
  exitCode: 137,
  finishedAtMs: Date.now(),
  engineSaysOom: false,
  ...overrides,
});

describe("whether a container was killed for memory", () => {
  test("an oom event that comes after the container ended still counts, and every caller hears the same", async () => {
    const kills = new MemoryKills({ graceMs: 2000, beforeMs: 10_000 });
    const first = kills.killedForMemory(ended());
    setTimeout(() => kills.noteOom("c1", Date.now()), 50);
    const second = kills.killedForMemory(ended());
    expect(await Promise.all([first, second])).toEqual([true, true]);
  });

  test("the engine's own flag or an earlier oom event decide at once", async () => {
    const kills = new MemoryKills({ graceMs: 60_000, beforeMs: 10_000 });
    expect(await kills.killedForMemory(ended({ engineSaysOom: true }))).toBe(true);
    kills.noteOom("c2", Date.now() - 500);
    expect(await kills.killedForMemory({ ...ended(), containerId: "c2" })).toBe(true);
  });

  test("a non-zero exit with no oom event within the grace is a plain exit", async () => {
    const kills = new MemoryKills({ graceMs: 100, beforeMs: 10_000 });
    expect(await kills.killedForMemory(ended())).toBe(false);
  });

  test("a container that ended long ago is decided from its record, without waiting", async () => {
    const kills = new MemoryKills({ graceMs: 60_000, beforeMs: 10_000 });
    expect(await kills.killedForMemory(ended({ finishedAtMs: Date.now() - 120_000 }))).toBe(false);
  });

  test("a clean exit is never a memory kill, even after an oom event", async () => {
    const kills = new MemoryKills({ graceMs: 100, beforeMs: 10_000 });
    kills.noteOom("c1", Date.now());
    expect(await kills.killedForMemory(ended({ exitCode: 0, engineSaysOom: true }))).toBe(false);
  });

  test("gVisor's exit code 2 after an oom event is a memory kill", async () => {
    const kills = new MemoryKills({ graceMs: 100, beforeMs: 10_000 });
    kills.noteOom("c1", Date.now() - 400);
    expect(await kills.killedForMemory(ended({ exitCode: 2 }))).toBe(true);
  });

  test("an oom event long before the end (one process killed in a sandbox that lived on) does not count", async () => {
    const kills = new MemoryKills({ graceMs: 100, beforeMs: 10_000 });
    kills.noteOom("c1", Date.now() - 60_000);
    expect(await kills.killedForMemory(ended())).toBe(false);
  });
});
