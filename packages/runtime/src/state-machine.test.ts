import { sandboxStates } from "@paddock/common/contracts";
import { describe, expect, test } from "vitest";
import {
  assertTransition,
  canTransition,
  InvalidTransitionError,
  type SandboxState,
} from "./state-machine.js";

describe("sandbox state machine", () => {
  test("follows the documented lifecycle", () => {
    expect(canTransition("Pending", "Running")).toBe(true);
    expect(canTransition("Running", "Pausing")).toBe(true);
    expect(canTransition("Pausing", "Paused")).toBe(true);
    expect(canTransition("Paused", "Resuming")).toBe(true);
    expect(canTransition("Resuming", "Running")).toBe(true);
    expect(canTransition("Running", "Stopping")).toBe(true);
    expect(canTransition("Stopping", "Terminated")).toBe(true);
  });

  test("refuses moves that skip or reverse the lifecycle with a 409", () => {
    expect(canTransition("Stopping", "Pausing")).toBe(false);
    expect(canTransition("Running", "Resuming")).toBe(false);
    expect(() => assertTransition("Failed", "Pausing", "pause")).toThrowError(
      /cannot pause a sandbox that is Failed/,
    );
    try {
      assertTransition("Terminated", "Running", "resume");
    } catch (error) {
      expect((error as { status: number }).status).toBe(409);
    }
  });

  test("Terminated is final and every live state can be stopped", () => {
    for (const state of sandboxStates) {
      expect(canTransition("Terminated", state)).toBe(false);
      if (state !== "Terminated" && state !== "Stopping") expect(canTransition(state, "Stopping")).toBe(true);
    }
  });

  test("allows exactly the documented moves, and a refused one is a typed 409 invalid_state", () => {
    const allowed = sandboxStates.flatMap((from) =>
      sandboxStates.filter((to) => canTransition(from, to)).map((to) => `${from}>${to}`),
    );
    expect(allowed).toEqual([
      "Pending>Running",
      "Pending>Stopping",
      "Pending>Failed",
      "Running>Pausing",
      "Running>Stopping",
      "Running>Failed",
      "Pausing>Running",
      "Pausing>Paused",
      "Pausing>Stopping",
      "Pausing>Failed",
      "Paused>Pausing",
      "Paused>Resuming",
      "Paused>Stopping",
      "Paused>Failed",
      "Resuming>Running",
      "Resuming>Paused",
      "Resuming>Stopping",
      "Resuming>Failed",
      "Stopping>Terminated",
      "Stopping>Failed",
      "Failed>Stopping",
    ]);
    const refused: Array<[SandboxState, SandboxState]> = [
      ["Paused", "Running"],
      ["Running", "Paused"],
      ["Failed", "Running"],
      ["Stopping", "Running"],
    ];
    for (const [from, to] of refused) {
      let thrown: unknown;
      try {
        assertTransition(from, to, "reconcile");
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidTransitionError);
      expect(thrown).toMatchObject({ status: 409, code: "invalid_state", from, to });
    }
  });
});
