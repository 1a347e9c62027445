import { describe, expect, it } from "vitest";
import { SealedBox } from "./sealed-box.js";

describe("SealedBox", () => {
  const box = new SealedBox("server-secret");

  it("opens what it sealed, and never stores the plaintext", () => {
    const sealed = box.seal("sk_live_abc", "secret:acc-1:STRIPE");
    expect(sealed).not.toContain("sk_live_abc");
    expect(box.open(sealed, "secret:acc-1:STRIPE")).toBe("sk_live_abc");
    // A fresh nonce every time: equal values do not look equal at rest.
    expect(box.seal("sk_live_abc", "secret:acc-1:STRIPE")).not.toBe(sealed);
  });

  it("refuses another context, another key and a tampered value", () => {
    const sealed = box.seal("value", "secret:acc-1:A");
    expect(() => box.open(sealed, "secret:acc-2:A")).toThrow();
    expect(() => new SealedBox("other-secret").open(sealed, "secret:acc-1:A")).toThrow();
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3] as string, "base64url");
    body[0] = (body[0] as number) ^ 1;
    parts[3] = body.toString("base64url");
    expect(() => box.open(parts.join("."), "secret:acc-1:A")).toThrow();
    expect(() => box.open("garbage", "secret:acc-1:A")).toThrow();
  });
});
