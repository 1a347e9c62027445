import { describe, expect, it } from "vitest";
import {
  buildQuery,
  forgeAnswer,
  parseQuestion,
  RCODE_NXDOMAIN,
  readAddresses,
  TYPE_A,
  TYPE_AAAA,
  withUdpPayloadSize,
} from "./dns-wire.js";

/** An answer as a resolver would send it: the question, a CNAME, then A and AAAA records with compression. */
function sampleAnswer(): Buffer {
  const query = buildQuery(0x1234, "www.Example.com", TYPE_A);
  const header = Buffer.from(query.subarray(0, 12));
  header[2] = 0x81;
  header[3] = 0x80;
  header.writeUInt16BE(3, 6);
  const pointer = (offset: number) => Buffer.from([0xc0 | (offset >> 8), offset & 0xff]);
  const record = (name: Buffer, type: number, ttl: number, data: Buffer) => {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(ttl, 4);
    fixed.writeUInt16BE(data.length, 8);
    return Buffer.concat([name, fixed, data]);
  };
  const cname = Buffer.concat([Buffer.from([3]), Buffer.from("cdn"), pointer(16)]); // cdn.example.com
  const cnameOffset = query.length + 12;
  return Buffer.concat([
    header,
    query.subarray(12),
    record(pointer(12), 5, 300, cname),
    record(pointer(cnameOffset), TYPE_A, 60, Buffer.from([192, 0, 2, 7])),
    record(pointer(cnameOffset), TYPE_AAAA, 90, Buffer.from("20010db8000000000000000000000001", "hex")),
  ]);
}

describe("DNS wire format", () => {
  it("reads a query's question in lower case", () => {
    const question = parseQuestion(buildQuery(7, "API.Example.com", TYPE_AAAA));
    expect(question).toMatchObject({ id: 7, name: "api.example.com", type: TYPE_AAAA });
  });

  it("forges an NXDOMAIN answer to the same question", () => {
    const query = buildQuery(99, "denied.test", TYPE_A);
    const answer = forgeAnswer(query, parseQuestion(query), RCODE_NXDOMAIN);
    expect(answer.readUInt16BE(0)).toBe(99);
    expect(answer[2]! & 0x80).toBe(0x80);
    expect(answer[3]! & 0x0f).toBe(RCODE_NXDOMAIN);
    expect(answer.readUInt16BE(6)).toBe(0);
    expect(answer.subarray(12)).toEqual(query.subarray(12));
  });

  it("reads A and AAAA records behind a CNAME through compression pointers", () => {
    expect(readAddresses(sampleAnswer())).toEqual([
      { family: 4, address: "192.0.2.7", ttl: 60 },
      { family: 6, address: "2001:db8:0:0:0:0:0:1", ttl: 90 },
    ]);
  });

  it("refuses malformed messages instead of reading past them", () => {
    const header = buildQuery(1, "a.test", TYPE_A).subarray(0, 12);
    const pointerLoop = Buffer.concat([header, Buffer.from([0xc0, 12, 0, 1, 0, 1])]);
    expect(() => parseQuestion(Buffer.alloc(5))).toThrow();
    expect(() => parseQuestion(pointerLoop)).toThrow();
    expect(() => parseQuestion(buildQuery(1, "a.test", TYPE_A).subarray(0, 16))).toThrow();
    expect(() => readAddresses(pointerLoop)).toThrow();
    expect(() => readAddresses(sampleAnswer().subarray(0, 60))).toThrow();
  });

  it("sets the EDNS payload size of a query, adding an OPT record when it has none", () => {
    const plain = buildQuery(7, "example.com", TYPE_A);
    const widened = withUdpPayloadSize(plain, 65_000);
    expect(widened.readUInt16BE(10)).toBe(1);
    expect(widened.length).toBe(plain.length + 11);
    expect(widened.readUInt16BE(plain.length + 1)).toBe(41);
    expect(widened.readUInt16BE(plain.length + 3)).toBe(65_000);
    expect(parseQuestion(widened)).toMatchObject({ id: 7, name: "example.com", type: TYPE_A });
    // One that has an OPT record keeps its length; only the size changes. The input is not touched.
    const again = withUdpPayloadSize(withUdpPayloadSize(plain, 4096), 1232);
    expect(again.length).toBe(widened.length);
    expect(again.readUInt16BE(plain.length + 3)).toBe(1232);
    expect(plain.readUInt16BE(10)).toBe(0);
    expect(() =>
      withUdpPayloadSize(Buffer.concat([plain, Buffer.from([0, 0, 41])]).fill(1, 10, 12), 512),
    ).toThrow();
  });
});
