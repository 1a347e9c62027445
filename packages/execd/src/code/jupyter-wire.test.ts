import { describe, expect, test } from "vitest";
import { DELIMITER, deserialize, newMessage, PROTOCOL_VERSION, serialize, sign } from "./jupyter-wire.js";

const parts = ['{"msg_id":"a"}', "{}", "{}", '{"code":"1"}'].map((part) => Buffer.from(part));

describe("message signing", () => {
  test("HMAC-SHA256 in hex over the four JSON parts, in order", () => {
    // Reference value from Python's hmac module over the same bytes.
    expect(sign("secret", parts)).toBe("8da40a9916be280bc0662cb464f368c616ae9a3affc6e8210b5a39c0ae543643");
    expect(sign("secret", [...parts].reverse())).not.toBe(sign("secret", parts));
  });

  test("an empty key means unsigned messages", () => {
    expect(sign("", parts)).toBe("");
  });
});

describe("serialize and deserialize", () => {
  const key = "0123456789abcdef";

  test("frames are delimiter, signature, header, parent, metadata, content", () => {
    const message = newMessage("execute_request", "session-1", { code: "1 + 1" });
    const frames = serialize(message, key);
    expect(frames[0]).toEqual(DELIMITER);
    expect(frames[1]?.toString()).toBe(sign(key, frames.slice(2, 6)));
    expect(JSON.parse(frames[2]?.toString() ?? "")).toMatchObject({
      msg_type: "execute_request",
      session: "session-1",
      version: PROTOCOL_VERSION,
    });
    expect(frames).toHaveLength(6);
    expect(new Date(message.header.date).getTime()).toBeGreaterThan(0);
  });

  test("round trip, skipping identities or an iopub topic and keeping binary buffers", () => {
    const message = newMessage("display_data", "s", { data: { "text/plain": "x" } });
    message.parent_header = { msg_id: "parent" };
    const buffer = Buffer.from([0, 1, 2]);
    const frames = [Buffer.from("display_data"), ...serialize({ ...message, buffers: [buffer] }, key)];
    const parsed = deserialize(frames, key);
    expect(parsed.header).toEqual(message.header);
    expect(parsed.parent_header).toEqual({ msg_id: "parent" });
    expect(parsed.content).toEqual({ data: { "text/plain": "x" } });
    expect(parsed.buffers).toEqual([buffer]);
  });

  test("a tampered part, a wrong key or a missing signature is refused", () => {
    const frames = serialize(newMessage("status", "s", { execution_state: "idle" }), key);
    const tampered = [...frames];
    tampered[5] = Buffer.from('{"execution_state":"busy"}');
    expect(() => deserialize(tampered, key)).toThrow(/signature/);
    expect(() => deserialize(frames, "another key")).toThrow(/signature/);
    const unsigned = [...frames];
    unsigned[1] = Buffer.alloc(0);
    expect(() => deserialize(unsigned, key)).toThrow(/signature/);
  });

  test("without a key, signatures are not checked", () => {
    const frames = serialize(newMessage("status", "s", {}), "");
    expect(frames[1]?.length).toBe(0);
    expect(deserialize(frames, "").header.msg_type).toBe("status");
  });

  test("no delimiter or too few parts is an error", () => {
    expect(() => deserialize(parts, key)).toThrow(/delimiter/);
    expect(() => deserialize([DELIMITER, Buffer.from(""), ...parts.slice(0, 3)], "")).toThrow(/four parts/);
  });
});
