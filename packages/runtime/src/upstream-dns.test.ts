import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { egressUpstreamDns } from "./upstream-dns.js";

describe("egressUpstreamDns", () => {
  const dir = mkdtempSync(join(tmpdir(), "paddock-resolv-"));
  const resolvConf = (text: string) => {
    const file = join(dir, `resolv-${Math.random()}`);
    writeFileSync(file, text);
    return file;
  };

  it("prefers the configured resolver", () => {
    expect(egressUpstreamDns("10.0.0.2:5353", resolvConf("nameserver 10.9.9.9\n"))).toBe("10.0.0.2:5353");
  });

  it("skips loopback resolvers, which mean nothing inside a sandbox", () => {
    const file = resolvConf(
      "# local stub\nnameserver 127.0.0.53\nnameserver ::1\nsearch lan\nnameserver 10.9.9.9\n",
    );
    expect(egressUpstreamDns("", file)).toBe("10.9.9.9");
  });

  it("gives nothing when the host has no usable resolver", () => {
    expect(egressUpstreamDns("", resolvConf("nameserver 127.0.0.1\n"))).toBeUndefined();
    expect(egressUpstreamDns("", join(dir, "absent"))).toBeUndefined();
  });
});
