/**
 * The little of the DNS wire format (RFC 1035) the proxy needs: read a query's question, forge
 * an NXDOMAIN or SERVFAIL answer to it, and read the A/AAAA records out of an upstream answer.
 */

export interface Question {
  id: number;
  /** Lower case, without the trailing dot. */
  name: string;
  type: number;
  /** Byte offset where the question section ends. */
  end: number;
}

export interface AddressRecord {
  family: 4 | 6;
  address: string;
  ttl: number;
}

export const TYPE_A = 1;
export const TYPE_AAAA = 28;
const TYPE_OPT = 41;
export const RCODE_SERVFAIL = 2;
export const RCODE_NXDOMAIN = 3;
const HEADER = 12;

/** Reads a possibly compressed name at `offset`; returns it and where the name ends in place. */
function readName(message: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let offset = start;
  let end = -1;
  for (let jumps = 0; jumps < 64; ) {
    const length = message[offset];
    if (length === undefined) throw new Error("name runs past the message");
    if (length === 0) {
      if (end < 0) end = offset + 1;
      return { name: labels.join("."), end };
    }
    if ((length & 0xc0) === 0xc0) {
      const low = message[offset + 1];
      if (low === undefined) throw new Error("truncated pointer");
      if (end < 0) end = offset + 2;
      offset = ((length & 0x3f) << 8) | low;
      jumps++;
      continue;
    }
    if (length > 63 || offset + 1 + length > message.length) throw new Error("bad label");
    labels.push(message.toString("latin1", offset + 1, offset + 1 + length).toLowerCase());
    offset += 1 + length;
  }
  throw new Error("too many compression pointers");
}

/** The single question of a query; throws on anything that is not one well-formed question. */
export function parseQuestion(message: Buffer): Question {
  if (message.length < HEADER) throw new Error("message shorter than a header");
  if (message[2]! & 0x80) throw new Error("not a query");
  if (message.readUInt16BE(4) !== 1) throw new Error("expected exactly one question");
  const { name, end } = readName(message, HEADER);
  if (end + 4 > message.length) throw new Error("question runs past the message");
  return { id: message.readUInt16BE(0), name, type: message.readUInt16BE(end), end: end + 4 };
}

/** An answer with the query's id and question, no records, and the given response code. */
export function forgeAnswer(query: Buffer, question: Question, rcode: number): Buffer {
  const answer = Buffer.alloc(question.end);
  query.copy(answer, 0, 0, question.end);
  // QR=1, keep opcode and RD; RA=1; rcode.
  answer[2] = 0x80 | (query[2]! & 0x79);
  answer[3] = 0x80 | (rcode & 0x0f);
  answer.writeUInt16BE(1, 4);
  answer.writeUInt16BE(0, 6);
  answer.writeUInt16BE(0, 8);
  answer.writeUInt16BE(0, 10);
  return answer;
}

/** Every A and AAAA record in the answer section (CNAME chains included). */
export function readAddresses(message: Buffer): AddressRecord[] {
  const questions = message.readUInt16BE(4);
  const answers = message.readUInt16BE(6);
  let offset = HEADER;
  for (let index = 0; index < questions; index++) offset = readName(message, offset).end + 4;
  const records: AddressRecord[] = [];
  for (let index = 0; index < answers; index++) {
    offset = readName(message, offset).end;
    if (offset + 10 > message.length) throw new Error("record runs past the message");
    const type = message.readUInt16BE(offset);
    const ttl = message.readUInt32BE(offset + 4);
    const length = message.readUInt16BE(offset + 8);
    const data = offset + 10;
    if (data + length > message.length) throw new Error("record data runs past the message");
    if (type === TYPE_A && length === 4) {
      records.push({ family: 4, address: [...message.subarray(data, data + 4)].join("."), ttl });
    } else if (type === TYPE_AAAA && length === 16) {
      const groups: string[] = [];
      for (let group = 0; group < 8; group++)
        groups.push(message.readUInt16BE(data + group * 2).toString(16));
      records.push({ family: 6, address: groups.join(":"), ttl });
    }
    offset = data + length;
  }
  return records;
}

/**
 * The message with its EDNS(0) UDP payload size (RFC 6891: the OPT record's class) set to
 * `size`, an OPT record appended when it has none.
 */
export function withUdpPayloadSize(message: Buffer, size: number): Buffer {
  const copy = Buffer.from(message);
  let offset = HEADER;
  for (let index = 0; index < copy.readUInt16BE(4); index++) offset = readName(copy, offset).end + 4;
  const records = copy.readUInt16BE(6) + copy.readUInt16BE(8) + copy.readUInt16BE(10);
  for (let index = 0; index < records; index++) {
    offset = readName(copy, offset).end;
    if (offset + 10 > copy.length) throw new Error("record runs past the message");
    if (copy.readUInt16BE(offset) === TYPE_OPT) {
      copy.writeUInt16BE(size, offset + 2);
      return copy;
    }
    offset += 10 + copy.readUInt16BE(offset + 8);
  }
  // Root name, type OPT, class = payload size, extended rcode/version/flags 0, no data.
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(TYPE_OPT, 1);
  opt.writeUInt16BE(size, 3);
  const extended = Buffer.concat([copy.subarray(0, offset), opt]);
  extended.writeUInt16BE(copy.readUInt16BE(10) + 1, 10);
  return extended;
}

/** Builds a query (used by tests and the health probe). */
export function buildQuery(id: number, name: string, type: number): Buffer {
  const labels = name.split(".").filter(Boolean);
  const question = Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, "latin1")])),
    Buffer.from([0, type >> 8, type & 0xff, 0, 1]),
  ]);
  const header = Buffer.alloc(HEADER);
  header.writeUInt16BE(id, 0);
  header[2] = 0x01; // RD
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, question]);
}
