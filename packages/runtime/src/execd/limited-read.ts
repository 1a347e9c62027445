import { Errors, PaddockError } from "@paddock/common";

/**
 * Reads a whole answer of at most `limit` bytes. A size execd gave beforehand is only a hint: the
 * sandbox can swap or grow a file in between, so past `limit` the read is cancelled and
 * refused, never held in memory.
 */
export async function readLimited(
  response: Response,
  limit: number,
  tooLarge: () => PaddockError,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Most bytes of one JSON answer from execd (a listing, a search) the server reads: a sandbox can
 * make a tree whose listing is as large as it likes.
 */
export const maxExecdJson = 64 * 2 ** 20;

/** Parses execd's JSON answer, refused with 413 once it passes `maxExecdJson` bytes. */
export async function readJsonLimited<T>(response: Response, what: string): Promise<T> {
  const bytes = await readLimited(
    response,
    maxExecdJson,
    () =>
      new PaddockError(
        Errors.payloadTooLarge,
        `${what} is larger than ${maxExecdJson / 2 ** 20} MiB; ask for less (a narrower path, a smaller depth)`,
      ),
  );
  return JSON.parse(bytes.toString("utf8")) as T;
}
