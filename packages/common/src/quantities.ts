/** Orchestrator-style resource quantities ("500m", "2", "512Mi", "1G") as plain numbers. */

const binary: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const decimal: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** CPU quantity in millicores: "500m" → 500, "2" → 2000, "0.5" → 500. Undefined when malformed. */
export function parseCpuMillis(quantity: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity.trim());
  if (!match) return undefined;
  const value = Number(match[1]);
  const millis = match[2] === "m" ? value : value * 1000;
  return Number.isFinite(millis) && millis > 0 ? Math.round(millis) : undefined;
}

/** Memory quantity in bytes: "512Mi", "1Gi", "1G", "1048576". Undefined when malformed. */
export function parseMemoryBytes(quantity: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(quantity.trim());
  if (!match) return undefined;
  const unit = match[2];
  const factor = unit ? (binary[unit] ?? decimal[unit] ?? 1) : 1;
  const bytes = Number(match[1]) * factor;
  return Number.isFinite(bytes) && bytes > 0 ? Math.round(bytes) : undefined;
}

/** GPU count: a non-negative integer string. */
export function parseGpuCount(quantity: string): number | undefined {
  return /^\d+$/.test(quantity.trim()) ? Number(quantity) : undefined;
}
