/** A fixed-window counter per key (email, client address): `limit` attempts per `windowMs`. */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts an attempt; returns the seconds to wait when over the limit, else 0. */
  hit(key: string, now = Date.now()): number {
    const window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      this.windows.set(key, { start: now, count: 1 });
      if (this.windows.size > 10_000) this.prune(now);
      return 0;
    }
    window.count++;
    return window.count > this.limit ? Math.ceil((window.start + this.windowMs - now) / 1000) : 0;
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows)
      if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}
