import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import type { EventStream } from "../streams/event-sink.js";

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

function numberAt(path: string): number | undefined {
  const text = read(path);
  const value = text === undefined ? Number.NaN : Number(text.split(/\s+/)[0]);
  return Number.isFinite(value) ? value : undefined;
}

/** CPU time used by the sandbox so far, in microseconds: its cgroup (v2 or v1), else /proc/stat. */
function cpuMicros(): number {
  const v2 = read("/sys/fs/cgroup/cpu.stat");
  const usage = v2 ? /usage_usec (\d+)/.exec(v2)?.[1] : undefined;
  if (usage) return Number(usage);
  const v1 =
    numberAt("/sys/fs/cgroup/cpuacct/cpuacct.usage") ?? numberAt("/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage");
  if (v1 !== undefined) return v1 / 1000;
  // No cgroup view (gVisor): the sandbox's own kernel counts only the sandbox's processes.
  const fields = (read("/proc/stat")?.split("\n")[0] ?? "").split(/\s+/).slice(1).map(Number);
  const busy = (fields[0] ?? 0) + (fields[1] ?? 0) + (fields[2] ?? 0) + (fields[5] ?? 0) + (fields[6] ?? 0);
  return (busy / 100) * 1e6;
}

/** CPUs the sandbox may use: the limit the runtime set, else its cgroup's quota, else the CPUs it sees. */
function cpuCount(limit: number | undefined): number {
  if (limit) return limit;
  const v2 = read("/sys/fs/cgroup/cpu.max")?.split(" ");
  if (v2 && v2[0] !== "max") return Number(v2[0]) / Number(v2[1]);
  const quota =
    numberAt("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ??
    numberAt("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us");
  const period =
    numberAt("/sys/fs/cgroup/cpu/cpu.cfs_period_us") ??
    numberAt("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us");
  if (quota !== undefined && quota > 0 && period) return quota / period;
  return cpus().length;
}

/** Memory used and allowed, in bytes: the sandbox's cgroup, else /proc/meminfo. */
function memory(): { used: number; total: number } {
  const hostTotal = totalmem();
  const v2Used = numberAt("/sys/fs/cgroup/memory.current");
  if (v2Used !== undefined) {
    const max = read("/sys/fs/cgroup/memory.max");
    const inactive = Number(/inactive_file (\d+)/.exec(read("/sys/fs/cgroup/memory.stat") ?? "")?.[1] ?? 0);
    return { used: v2Used - inactive, total: max && max !== "max" ? Number(max) : hostTotal };
  }
  const v1Used = numberAt("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  if (v1Used !== undefined) {
    const limit = numberAt("/sys/fs/cgroup/memory/memory.limit_in_bytes") ?? hostTotal;
    const inactive = Number(
      /total_inactive_file (\d+)/.exec(read("/sys/fs/cgroup/memory/memory.stat") ?? "")?.[1] ?? 0,
    );
    return { used: v1Used - inactive, total: Math.min(limit, hostTotal) };
  }
  const meminfo = read("/proc/meminfo") ?? "";
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(meminfo)?.[1] ?? 0) * 1024;
  return { used: field("MemTotal") - field("MemAvailable"), total: field("MemTotal") };
}

/** Samples CPU over the time since the previous sample. */
export class Metrics {
  private last = { at: performance.now(), cpu: cpuMicros() };

  constructor(private readonly cpuLimit?: number) {}

  snapshot() {
    const now = { at: performance.now(), cpu: cpuMicros() };
    const count = cpuCount(this.cpuLimit);
    const wallMicros = Math.max(1, (now.at - this.last.at) * 1000);
    const pct = Math.min(100, Math.max(0, ((now.cpu - this.last.cpu) / wallMicros / count) * 100));
    this.last = now;
    const { used, total } = memory();
    const mib = 2 ** 20;
    return {
      cpu_count: Math.round(count * 100) / 100,
      cpu_used_pct: Math.round(pct * 100) / 100,
      mem_total_mib: Math.round((total / mib) * 100) / 100,
      mem_used_mib: Math.round((Math.max(0, used) / mib) * 100) / 100,
      timestamp: Date.now(),
    };
  }

  /** Streams a sample a second until the client leaves; a client behind misses samples. */
  watch(stream: EventStream): void {
    const sse = stream.open();
    const sampler = new Metrics(this.cpuLimit);
    // A client that has not taken the last sample yet misses the next ones rather than have them
    // wait in execd's memory.
    let full = false;
    const tick = () => {
      if (full) return;
      full = !sse.send({ type: "metrics", ...sampler.snapshot() });
      if (full)
        void sse.drained().then(() => {
          full = false;
        });
    };
    tick();
    const timer = setInterval(tick, 1000);
    stream.closed.addEventListener("abort", () => clearInterval(timer));
  }
}
