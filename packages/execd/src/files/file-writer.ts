import { once } from "node:events";
import type { Writable } from "node:stream";

/**
 * How many bytes an upload gathers before writing them: the socket delivers 64 KiB at a time, and
 * under gVisor each write to the file is a trip through the sandbox's kernel, so fewer and larger
 * writes go faster. One piece may be written while the next is gathered.
 */
export const uploadPiece = 1024 * 1024;

/** The buffer of the file stream a `fileWriter` writes to: one piece written while the next is gathered. */
export const uploadFileBuffer = 2 * uploadPiece;

/**
 * An upload part's bytes into a file still being opened, gathered into pieces of `uploadPiece`
 * bytes, each handed to the file as one vectored write (no copy). `write` returns a promise only
 * when the caller must wait: while the file is still opening, or while two pieces are pending (a
 * slow disk holds the client back, not execd's memory); otherwise the bytes flow on without a
 * turn of the event loop. `end` resolves once the file has everything. A stream error fails the
 * next write instead of leaving it to wait for a drain.
 */
export function fileWriter<File extends Writable>(
  opening: Promise<File>,
): { write(chunk: Buffer): Promise<void> | undefined; end(): Promise<File> } {
  let opened: File | undefined;
  let held: Buffer[] = [];
  let heldBytes = 0;
  const flush = (file: File): Promise<void> | undefined => {
    // A piece that failed while the next was gathered: no 'drain' or 'finish' will come.
    if (file.errored) return Promise.reject(file.errored);
    if (heldBytes === 0) return undefined;
    const chunks = held;
    held = [];
    heldBytes = 0;
    file.cork();
    let room = true;
    for (const chunk of chunks) room = file.write(chunk);
    file.uncork();
    return room ? undefined : once(file, "drain").then(() => undefined);
  };
  return {
    write: (chunk) => {
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < uploadPiece) return undefined;
      if (opened) return flush(opened);
      return opening.then((file) => {
        opened = file;
        return flush(file);
      });
    },
    end: async () => {
      const file = await opening;
      await flush(file);
      const finished = once(file, "finish");
      file.end();
      await finished;
      return file;
    },
  };
}
