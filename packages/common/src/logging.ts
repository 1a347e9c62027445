import { type Logger, pino } from "pino";

export type { Logger };

/** Header and field names whose values must never reach a log line. */
const redactPaths = [
  "req.headers.authorization",
  'req.headers["runtime-api-key"]',
  'req.headers["open-sandbox-api-key"]',
  'req.headers["x-execd-access-token"]',
  'req.headers["x-paddock-access-token"]',
  "req.headers.cookie",
  "password",
  "token",
  "secret",
];

export function createLogger(
  options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const settings = {
    name: options.name ?? "paddock",
    level: options.level ?? process.env.PADDOCK_LOG_LEVEL ?? "info",
    redact: { paths: redactPaths, censor: "[redacted]" },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
