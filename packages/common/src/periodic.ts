/**
 * Work done every `intervalMs` (sweeps, checkpoints, lease renewals), one run at a time: a tick
 * that comes while a run is in progress starts nothing. The timer does not keep the process alive.
 */
export class Periodic {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  /**
   * `onError` hears a run that failed: unheard, its rejection would end the process (a sweep
   * whose database went away for a moment must not take the server with it).
   */
  constructor(
    private readonly work: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.#timer = setInterval(() => this.runSoon(), this.intervalMs);
    this.#timer.unref();
  }

  /** Between start and stop. */
  get started(): boolean {
    return this.#timer !== undefined;
  }

  /** Starts a run now unless one is in progress. */
  runSoon(): void {
    this.#running ??= this.work()
      .catch(this.onError)
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Resolves when the run in progress, if any, is done. */
  async settled(): Promise<void> {
    await this.#running;
  }

  /** Stops the timer and waits for the run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
