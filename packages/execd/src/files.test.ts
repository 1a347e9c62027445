import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Environment } from "./environment.js";
import { createExecd, type Execd } from "./server.js";

describe("execd uploads", () => {
  let execd: Execd;
  let port: number;

  beforeAll(async () => {
    execd = createExecd({ token: "secret", env: new Environment({}), isolated: false });
    await new Promise<void>((resolve) => execd.server.listen(0, "127.0.0.1", resolve));
    port = (execd.server.address() as AddressInfo).port;
  });
  afterAll(() => execd?.close());

  test("an upload cut off midway leaves the file as it was and no partial file behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "execd-upload-"));
    const target = join(dir, "data.txt");
    writeFileSync(target, "the old content");
    const boundary = "cutoff";
    const upload = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/files/upload",
      headers: {
        "x-execd-access-token": "secret",
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
    });
    upload.on("error", () => undefined);
    upload.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify({ path: target })}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n\r\n`,
    );
    upload.write(Buffer.alloc(256 * 1024, "n"));
    // The partial file exists while the upload runs...
    for (let i = 0; i < 100 && readdirSync(dir).length < 2; i++) await sleep(20);
    expect(readdirSync(dir).length).toBe(2);
    // ...and is gone once the sender disappears before the closing boundary.
    upload.destroy();
    for (let i = 0; i < 100 && readdirSync(dir).length > 1; i++) await sleep(20);
    expect(readdirSync(dir)).toEqual(["data.txt"]);
    expect(readFileSync(target, "utf8")).toBe("the old content");
  });
});
