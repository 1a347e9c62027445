// The "outside world" for egress tests, run inside a network namespace of the test's own:
// a DNS server on the first address given, and an HTTP server (port 80) and a UDP echo (port 7)
// on every address. Nothing here reaches past this machine.
// Usage: node egress-world-server.mjs <dns-address> <name>=<address>...
import dgram from "node:dgram";
import http from "node:http";

const [dnsAddress, ...mappings] = process.argv.slice(2);
const records = new Map(mappings.map((mapping) => mapping.split("=")));

function questionOf(query) {
  const labels = [];
  let offset = 12;
  while (query[offset] !== 0) {
    const length = query[offset];
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString("ascii"));
    offset += 1 + length;
  }
  offset += 1;
  return { name: labels.join(".").toLowerCase(), type: query.readUInt16BE(offset), end: offset + 4 };
}

function answer(query) {
  const { name, type, end } = questionOf(query);
  const address = records.get(name);
  const found = address !== undefined && type === 1;
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  // Response, recursion desired and available; NXDOMAIN for names this world does not know.
  header.writeUInt16BE(0x8180 | (address === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(found ? 1 : 0, 6);
  const parts = [header, query.subarray(12, end)];
  if (found) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(1, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(60, 6);
    record.writeUInt16BE(4, 10);
    Buffer.from(address.split(".").map(Number)).copy(record, 12);
    parts.push(record);
  }
  return Buffer.concat(parts);
}

const dns = dgram.createSocket("udp4");
dns.on("message", (query, peer) => dns.send(answer(query), peer.port, peer.address));
/** One echo socket per address: a wildcard one would answer from the route's address instead. */
function echoOn(address) {
  const echo = dgram.createSocket("udp4");
  echo.on("message", (datagram, peer) => echo.send(datagram, peer.port, peer.address));
  return new Promise((resolve) => echo.bind(7, address, resolve));
}

dns.bind(53, dnsAddress, async () => {
  await Promise.all([...new Set(records.values())].map(echoOn));
  http
    .createServer((request, response) => response.end(`hello from ${request.socket.localAddress}\n`))
    .listen(80, "0.0.0.0", () => console.log("ready"));
});
