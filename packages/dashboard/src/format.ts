const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : "—";
}

/** "in 5 minutes", "2 hours ago": how far a moment is from now, in its largest whole unit. */
export function formatRelative(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ["day", 86_400],
    ["hour", 3600],
    ["minute", 60],
  ];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  }
  return relative.format(seconds, "second");
}

export function formatMinutes(minutes: number): string {
  return minutes < 10 ? minutes.toFixed(2) : minutes.toFixed(minutes < 100 ? 1 : 0);
}

const durationUnits: Array<[Intl.NumberFormatOptions["unit"], number]> = [
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** "15 minutes", "1 hour", "30 days": a count of seconds in the largest unit that divides it. */
export function formatDuration(seconds: number): string {
  const [unit, size] = durationUnits.find(([, size]) => seconds % size === 0) ?? ["second", 1];
  return new Intl.NumberFormat(undefined, { style: "unit", unit, unitDisplay: "long" }).format(
    seconds / size,
  );
}
