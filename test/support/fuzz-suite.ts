import { afterAll, expect, test } from "vitest";
import { fuzzOperation, type Operation, type Surface, unexercised } from "./openapi-fuzz.js";

/**
 * Registers one test per operation, each fuzzing it on `surface` after `before` (which sets what
 * that operation may be given: credentials, known ids), then one that fails on any operation left
 * unexercised, so a route new in the definition cannot go untested. Prints the counts at the end.
 */
export function fuzzEveryOperation(
  label: string,
  operations: Operation[],
  surface: Surface,
  options: { atLeast: number; before?: (operation: Operation) => void | Promise<void> },
): void {
  const exercised = new Set<string>();
  let cases = 0;
  afterAll(() => console.log(`${label}: ${exercised.size} operations, ${cases} cases`));

  test.each(operations.map((operation) => [operation.id, operation] as const))(
    "%s",
    async (_id, operation) => {
      await options.before?.(operation);
      cases += await fuzzOperation(surface, operation);
      exercised.add(operation.id);
    },
    120_000,
  );

  test("every operation in the definition was fuzzed", () => {
    expect(operations.length).toBeGreaterThan(options.atLeast);
    expect(unexercised(operations, exercised)).toEqual([]);
  });
}
