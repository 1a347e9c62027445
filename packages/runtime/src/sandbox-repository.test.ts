import { createTestDatabase, type DatabaseHandle } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SandboxRepository } from "./sandbox-repository.js";
import { InvalidTransitionError, type SandboxState } from "./state-machine.js";
import { sandboxRecord } from "./testing/records.js";

describe("sandbox repository state writes", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let repository: SandboxRepository;
  const observed: string[] = [];

  const insert = async (id: string, state: SandboxState) => {
    await repository.insert(
      sandboxRecord(id, { status: { state, lastTransitionAt: new Date().toISOString() } }),
    );
  };

  beforeAll(async () => {
    database = await createTestDatabase("sqlite");
    handle = await database.open();
    repository = new SandboxRepository(handle.db, async (id, state) => {
      observed.push(`${id}:${state}`);
    });
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("go through the state machine: an illegal move throws and writes nothing", async () => {
    await insert("sbx-paused", "Paused");
    observed.length = 0;
    await expect(repository.setState("sbx-paused", "Paused", "Running")).rejects.toBeInstanceOf(
      InvalidTransitionError,
    );
    await expect(repository.setState("sbx-paused", ["Resuming", "Paused"], "Pausing")).rejects.toMatchObject({
      status: 409,
      code: "invalid_state",
    });
    expect((await repository.find("sbx-paused"))?.status.state).toBe("Paused");
    expect(observed).toEqual([]);
    // The legal path still works, one step at a time.
    expect(await repository.setState("sbx-paused", "Paused", "Resuming")).toBe(true);
    expect(await repository.setState("sbx-paused", "Resuming", "Running")).toBe(true);
    expect((await repository.find("sbx-paused"))?.status.state).toBe("Running");
    expect(observed).toEqual(["sbx-paused:Resuming", "sbx-paused:Running"]);
  });

  test("a legal move from a state the row is no longer in is a lost race, not an error", async () => {
    await insert("sbx-running", "Running");
    expect(await repository.setState("sbx-running", "Pausing", "Paused")).toBe(false);
    expect((await repository.find("sbx-running"))?.status.state).toBe("Running");
  });
});
