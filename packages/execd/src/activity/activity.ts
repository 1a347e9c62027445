/** `GET /activity`: whether anything execd started is still at work, and how many requests are open. */
export interface ActivityReport {
  /** Commands, session runs, code cells, terminals, isolated runs and envd processes running now. */
  running: number;
  /** Requests in flight (streams and downloads included), `/activity` and `/ping` aside. */
  requests: number;
}

/** One registry's count of what it has running; an isolated session's agent is asked, so it may wait. */
export type RunningCount = () => number | Promise<number>;

/**
 * The answer to "is this sandbox at work?", asked before an idle sandbox is paused. Each registry
 * counts its own (no process table is walked); requests are counted as they come and go.
 */
export class Activity {
  private inFlight = 0;

  constructor(private readonly counts: RunningCount[]) {}

  /** Counts a request as in flight; the returned function, called once or more, ends it. */
  requestStarted(): () => void {
    this.inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight--;
    };
  }

  async report(): Promise<ActivityReport> {
    const counts = await Promise.all(this.counts.map((count) => count()));
    return { running: counts.reduce((sum, count) => sum + count, 0), requests: this.inFlight };
  }
}
