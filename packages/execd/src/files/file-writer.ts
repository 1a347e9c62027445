import { once } from "node:events";
import type { Writable } from "node:stream";

/**
 * An upload part's bytes into a file still being opened: each write waits for the file to take
 * the chunk (a slow disk holds the client back, not execd's memory), and `end` resolves once the
 * file has everything. A stream error fails the wait instead of leaving it for a drain.
 */
export function fileWriter<File extends Writable>(
  opening: Promise<File>,
): { write(chunk: Buffer): Promise<void>; end(): Promise<File> } {
  return {
    write: async (chunk) => {
      const file = await opening;
      if (!file.write(chunk)) await once(file, "drain");
    },
    end: async () => {
      const file = await opening;
      const finished = once(file, "finish");
      file.end();
      await finished;
      return file;
    },
  };
}
