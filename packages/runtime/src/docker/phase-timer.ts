/** Durations of consecutive phases of one piece of work, in milliseconds. */
export class PhaseTimer {
  readonly durations: Record<string, number> = {};
  private last = performance.now();

  /** Ends the phase running since the previous call (or since construction). */
  end(name: string): void {
    const now = performance.now();
    this.durations[name] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
  }
}
