/**
 * Docker multiplexes stdout and stderr of a non-TTY container into frames of an 8-byte
 * header (stream type, 3 zero bytes, big-endian length) and the payload.
 */
export function demuxDockerLogs(buffer: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const length = buffer.readUInt32BE(offset + 4);
    parts.push(buffer.subarray(offset + 8, offset + 8 + length));
    offset += 8 + length;
  }
  return Buffer.concat(parts).toString("utf8");
}
