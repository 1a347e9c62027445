import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { Periodic } from "./periodic.js";

describe("Periodic", () => {
  it("runs its work every interval, one run at a time, and stop waits for the run in progress", async () => {
    let runs = 0;
    let inProgress = 0;
    let most = 0;
    let finished = 0;
    const work = new Periodic(
      async () => {
        runs++;
        inProgress++;
        most = Math.max(most, inProgress);
        await sleep(40);
        inProgress--;
        finished++;
      },
      5,
      () => undefined,
    );
    expect(work.started).toBe(false);
    work.start();
    expect(work.started).toBe(true);
    await sleep(150);
    await work.stop();
    expect(work.started).toBe(false);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(most).toBe(1);
    expect(finished).toBe(runs);
    await sleep(30);
    expect(runs).toBe(finished);
  });

  it("runSoon starts a run now unless one is in progress", async () => {
    let runs = 0;
    const work = new Periodic(
      async () => {
        runs++;
        await sleep(20);
      },
      60_000,
      () => undefined,
    );
    work.runSoon();
    work.runSoon();
    await work.settled();
    expect(runs).toBe(1);
    work.runSoon();
    await work.settled();
    expect(runs).toBe(2);
  });

  it("a run that fails is reported, and the next run goes ahead", async () => {
    const failures: unknown[] = [];
    let runs = 0;
    const work = new Periodic(
      async () => {
        runs++;
        if (runs === 1) throw new Error("the database is away");
      },
      60_000,
      (error) => failures.push(error),
    );
    work.runSoon();
    await work.settled();
    expect(failures).toEqual([new Error("the database is away")]);
    work.runSoon();
    await work.settled();
    expect(runs).toBe(2);
  });
});
