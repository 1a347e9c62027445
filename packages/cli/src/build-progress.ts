import { MultiBar, type Options, type Params, type SingleBar } from "cli-progress";
import type { BuildLogEntry } from "paddock";

const barWidth = 30;

/**
 * A template build's log on stdout, a line per entry. On a terminal the lines scroll above a bar
 * of the steps done (cli-progress draws it below what it logs, so neither garbles the other);
 * elsewhere the lines alone, as they came.
 */
export class BuildProgress {
  private done = 0;
  private total = 0;
  private current = "";
  private readonly bars: MultiBar | undefined;
  private readonly bar: SingleBar | undefined;

  constructor(
    private readonly label: string,
    terminal = process.stdout.isTTY === true,
  ) {
    if (!terminal) return;
    this.bars = new MultiBar({
      stream: process.stdout,
      format: (_options: Options, params: Params) => this.describe(params),
      hideCursor: true,
      clearOnComplete: false,
      // Ctrl-C is the command's to handle: it cancels the build, then stops the bar.
      gracefulExit: false,
    });
    this.bar = this.bars.create(0, 0);
  }

  /** One entry of the log: printed, and counted when it starts a step. */
  line(entry: BuildLogEntry): void {
    const message = entry.message;
    // "step 3/7 (Dockerfile line 5): RUN …" starts step 3 of 7; "building 7 steps from …" comes first.
    const step = /^step (\d+)\/(\d+)\b/.exec(message);
    const planned = /^building (\d+) steps? from /.exec(message);
    if (step) {
      this.total = Number(step[2]);
      this.done = Number(step[1]) - 1;
      this.current = withoutControls(message.replace(/^step \d+\/\d+(?: \([^)]*\))?: /, ""));
    } else if (planned) {
      this.total = Number(planned[1]);
    }
    if (!this.bars) {
      process.stdout.write(`${message}\n`);
      return;
    }
    this.bars.log(`${withoutControls(message)}\n`);
    this.bar?.setTotal(this.total);
    this.bar?.update(this.done);
  }

  /** Draws the last state (every step done when `ready`) and leaves the bar where it is. */
  stop(ready: boolean): void {
    if (ready) {
      this.done = this.total;
      this.current = "";
      this.bar?.update(this.done);
    }
    // stop() alone would drop lines logged since the last redraw.
    this.bars?.update();
    this.bars?.stop();
  }

  private describe(params: Params): string {
    const seconds = Math.round((Date.now() - params.startTime) / 1000);
    const filled = this.total ? Math.round((barWidth * this.done) / this.total) : 0;
    const steps = this.total ? `${this.done}/${this.total} steps` : "starting";
    const current = this.current ? `  ${this.current}` : "";
    return `${this.label}  ${"█".repeat(filled)}${"░".repeat(barWidth - filled)} ${steps}  ${seconds}s${current}`;
  }
}

/**
 * The text without escape sequences and control characters: a carriage return or a cursor move in
 * a step's output would move the cursor the bar is drawn from.
 */
function withoutControls(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]/g, "");
}
