import Table from "cli-table3";
import { InvalidArgumentError } from "commander";

/** A failure the CLI reports itself: one line with a code, and the process's exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exitStatus = 1,
  ) {
    super(message);
  }
}

/** Wrong or missing arguments: exit status 2, as commander's own usage errors. */
export function usageError(message: string): CliError {
  return new CliError(message, "usage", 2);
}

/** Commander's usage errors in the CLI's one-line form, with an optional hint. */
export function usageLine(message: string, hint = ""): string {
  return `paddock: ${message.replace(/^error: /, "").trim()}${hint} (usage)\n`;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

type Cell = string | number | boolean | null | undefined;

/** Columns without borders (as `docker ps` prints them): easy to read and to grep. */
export function printTable(head: string[], rows: Cell[][]): void {
  const table = new Table({
    head,
    chars: {
      top: "",
      "top-mid": "",
      "top-left": "",
      "top-right": "",
      bottom: "",
      "bottom-mid": "",
      "bottom-left": "",
      "bottom-right": "",
      left: "",
      "left-mid": "",
      mid: "",
      "mid-mid": "",
      right: "",
      "right-mid": "",
      middle: "  ",
    },
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
  });
  table.push(...rows.map((row) => row.map((cell) => cell ?? "-")));
  process.stdout.write(`${table.toString().replace(/ +$/gm, "")}\n`);
}

/** One record as `field: value` lines. */
export function printRecord(fields: Array<[string, Cell]>): void {
  const width = Math.max(...fields.map(([name]) => name.length)) + 1;
  for (const [name, value] of fields) process.stdout.write(`${`${name}:`.padEnd(width)} ${value ?? "-"}\n`);
}

/** An RFC 3339 time as `YYYY-MM-DD HH:MM:SS` UTC; `fallback` when there is none. */
export function formatTime(time: string | null | undefined, fallback = "-"): string {
  return time ? time.slice(0, 19).replace("T", " ") : fallback;
}

/** Collects repeated `KEY=VALUE` options into a record; the value may hold further `=`. */
export function collectPair(pair: string, record: Record<string, string> = {}): Record<string, string> {
  const separator = pair.indexOf("=");
  if (separator < 1) throw new InvalidArgumentError("expected KEY=VALUE");
  return { ...record, [pair.slice(0, separator)]: pair.slice(separator + 1) };
}

/** Collects every use of a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
