import { isPaddockError } from "@paddock/common";
import { maxExecdJson, readJsonLimited, readLimited } from "@paddock/runtime";
import { describe, expect, test } from "vitest";
import { inlineTooLarge } from "./file-transfer.js";

/** A download of `total` bytes made only as it is read; counts what was pulled from it. */
function endlessDownload(total: number) {
  const chunk = new Uint8Array(64 * 1024);
  const pulled = { bytes: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      pulled.bytes += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      pulled.cancelled = true;
    },
  });
  return { response: new Response(body), pulled };
}

describe("readLimited", () => {
  test("reads a download within the limit whole", async () => {
    const { response } = endlessDownload(256 * 1024);
    const bytes = await readLimited(response, 1024 * 1024, () => inlineTooLarge("too large"));
    expect(bytes.length).toBe(256 * 1024);
  });

  test("a download that turns out larger than its announced size is cut off at the limit, not held", async () => {
    // The sandbox swapped a small file for a 2 GiB one between the size check and the read.
    const { response, pulled } = endlessDownload(2 * 2 ** 30);
    const error = await readLimited(response, 16 * 2 ** 20, () => inlineTooLarge("/tmp/f is larger")).catch(
      (caught: unknown) => caught,
    );
    expect(isPaddockError(error) && error.status).toBe(413);
    expect(pulled.bytes).toBeLessThan(17 * 2 ** 20);
    expect(pulled.cancelled).toBe(true);
  });

  test("execd's JSON answers are parsed within 64 MiB; a larger one (a listing of a huge tree) is refused unread", async () => {
    expect(await readJsonLimited(new Response('[{"path":"/a"}]'), "the listing")).toEqual([{ path: "/a" }]);
    const { response, pulled } = endlessDownload(2 * 2 ** 30);
    const error = await readJsonLimited(response, "the listing").catch((caught: unknown) => caught);
    expect(isPaddockError(error) && error.status).toBe(413);
    expect(pulled.bytes).toBeLessThan(maxExecdJson + 2 ** 20);
  });
});
