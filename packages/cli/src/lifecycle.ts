import { InvalidArgumentError } from "commander";
import type { SandboxInfo } from "paddock";

const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * `--idle-timeout` and `--max-paused`: a duration such as `90s`, `15m`, `2h`, `30d` or `1h30m`
 * (a bare number is seconds), or `never` (kept as the word: commander reads a parsed null as no
 * value; `secondsOrNull` turns it into the API's null).
 */
export function durationOrNever(value: string): number | "never" {
  const text = value.trim().toLowerCase();
  if (text === "never") return "never";
  const parts = text.match(/^(?:\d+[smhd]?)+$/) ? [...text.matchAll(/(\d+)([smhd]?)/g)] : [];
  const seconds = parts.reduce((sum, [, count, unit]) => sum + Number(count) * (units[unit || "s"] ?? 1), 0);
  if (!Number.isSafeInteger(seconds) || seconds < 1)
    throw new InvalidArgumentError('a duration such as 90s, 15m, 2h or 30d, or "never"');
  return seconds;
}

/** A parsed `--idle-timeout` or `--max-paused` as the API takes it: seconds, or null for never. */
export function secondsOrNull(value: number | "never"): number | null {
  return value === "never" ? null : value;
}

/** Seconds as the largest units that say them exactly: `15m`, `30d`, `1h30m`, `90s`. */
export function formatDuration(seconds: number): string {
  let left = seconds;
  let text = "";
  for (const [unit, size] of Object.entries(units).reverse()) {
    if (left >= size) {
      text += `${Math.floor(left / size)}${unit}`;
      left %= size;
    }
  }
  return text || "0s";
}

/** "pauses after 15m idle; deleted after 30d paused", as the create's lifecycle says. */
export function describeSleep(
  lifecycle: Pick<SandboxInfo["lifecycle"], "idleTimeout" | "maxPaused">,
): string {
  const idle =
    lifecycle.idleTimeout === null
      ? "never pauses when idle"
      : `pauses after ${formatDuration(lifecycle.idleTimeout)} idle`;
  const kept =
    lifecycle.maxPaused === null
      ? "kept while paused"
      : `deleted after ${formatDuration(lifecycle.maxPaused)} paused`;
  return `${idle}; ${kept}`;
}

/** The state with where a paused sandbox sleeps: `Paused (memory)`, `Paused (disk, processes restart)`. */
export function describeState(info: SandboxInfo): string {
  if (info.pausedTo === null) return info.state;
  if (info.pausedTo === "memory") return `${info.state} (memory)`;
  return `${info.state} (disk${info.memoryPreserved === false ? ", processes restart on resume" : ""})`;
}
