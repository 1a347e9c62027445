import { formatBytes } from "@paddock/common/format";
import { type Options, type Params, SingleBar } from "cli-progress";

const barWidth = 30;

/**
 * Passes bytes through, drawing a progress bar on stderr when stderr is a terminal (nothing
 * otherwise). `total` is the size when known; without it the bar shows bytes and rate only.
 */
export async function* withProgress(
  source: AsyncIterable<Uint8Array>,
  label: string,
  total: number | undefined,
): AsyncGenerator<Uint8Array> {
  if (!process.stderr.isTTY) {
    yield* source;
    return;
  }
  const bar = new SingleBar({
    stream: process.stderr,
    format: (_options: Options, params: Params) => describe(label, params, total),
    hideCursor: true,
    clearOnComplete: false,
  });
  bar.start(total ?? 0, 0);
  let sent = 0;
  try {
    for await (const chunk of source) {
      sent += chunk.length;
      bar.update(sent);
      yield chunk;
    }
  } finally {
    bar.stop();
  }
}

function describe(label: string, params: Params, total: number | undefined): string {
  const seconds = Math.max((Date.now() - params.startTime) / 1000, 0.001);
  const rate = `${formatBytes(params.value / seconds)}/s`;
  if (total === undefined) return `${label}  ${formatBytes(params.value)}  ${rate}`;
  const filled = Math.round(barWidth * (total ? params.value / total : 1));
  const percent = Math.round(100 * (total ? params.value / total : 1));
  return `${label}  ${"█".repeat(filled)}${"░".repeat(barWidth - filled)} ${percent}%  ${formatBytes(params.value)} of ${formatBytes(total)}  ${rate}`;
}
