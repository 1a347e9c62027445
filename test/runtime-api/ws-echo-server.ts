/**
 * A tiny WebSocket echo server (RFC 6455 handshake, unfragmented text frames) as a script to run
 * inside a sandbox with Node, so the proxy's upgrade path meets a real WebSocket peer. It refuses
 * an upgrade whose Origin is not the host the client asked for, and shows the request's headers
 * at /headers.
 */
export const wsEchoServer = `
const http = require("http"), crypto = require("crypto");
const server = http.createServer((req, res) =>
  res.end(req.url === "/headers" ? JSON.stringify(req.headers) : "plain http ok"),
);
server.on("upgrade", (req, socket) => {
  // As editors and notebooks behind a proxy do: the browser's Origin must name the host it asked.
  const origin = req.headers.origin && new URL(req.headers.origin).host;
  if (origin && origin !== (req.headers["x-forwarded-host"] || req.headers.host)) {
    return socket.end("HTTP/1.1 403 Forbidden\\r\\nContent-Length: 0\\r\\n\\r\\n");
  }
  const accept = crypto.createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + "\\r\\n\\r\\n");
  socket.on("data", (frame) => {
    let length = frame[1] & 127, offset = 2;
    if (length === 126) { length = frame.readUInt16BE(2); offset = 4; }
    const mask = frame.subarray(offset, offset + 4), data = Buffer.from(frame.subarray(offset + 4, offset + 4 + length));
    for (let i = 0; i < data.length; i++) data[i] ^= mask[i % 4];
    if ((frame[0] & 15) === 8) return socket.end();
    const reply = Buffer.from("echo: " + data.toString());
    socket.write(Buffer.concat([Buffer.from([0x81, reply.length]), reply]));
  });
});
server.listen(8080);
`;
