/**
 * Jupyter messages on the wire (messaging protocol 5.3): routing identities, the `<IDS|MSG>`
 * delimiter, an HMAC-SHA256 signature over the four JSON parts, then header, parent header,
 * metadata, content, and any binary buffers.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";

export const DELIMITER = Buffer.from("<IDS|MSG>");
export const PROTOCOL_VERSION = "5.3";

export interface MessageHeader {
  msg_id: string;
  session: string;
  username: string;
  date: string;
  msg_type: string;
  version: string;
}

export interface JupyterMessage {
  header: MessageHeader;
  /** Empty for messages that answer nothing. */
  parent_header: Partial<MessageHeader>;
  metadata: Record<string, unknown>;
  content: Record<string, unknown>;
  buffers?: Buffer[];
}

/** Hex HMAC-SHA256 of the parts under `key`; an empty key means unsigned messages. */
export function sign(key: string, parts: Buffer[]): string {
  if (!key) return "";
  const hmac = createHmac("sha256", key);
  for (const part of parts) hmac.update(part);
  return hmac.digest("hex");
}

export function newMessage(
  msgType: string,
  session: string,
  content: Record<string, unknown>,
): JupyterMessage {
  return {
    header: {
      msg_id: randomUUID(),
      session,
      username: "paddock",
      date: new Date().toISOString(),
      msg_type: msgType,
      version: PROTOCOL_VERSION,
    },
    parent_header: {},
    metadata: {},
    content,
  };
}

/** The frames to send from a DEALER socket (the kernel's ROUTER adds our identity itself). */
export function serialize(message: JupyterMessage, key: string): Buffer[] {
  const parts = [message.header, message.parent_header, message.metadata, message.content].map((part) =>
    Buffer.from(JSON.stringify(part), "utf8"),
  );
  return [DELIMITER, Buffer.from(sign(key, parts), "ascii"), ...parts, ...(message.buffers ?? [])];
}

/** Parses received frames (anything before the delimiter, e.g. an iopub topic, is skipped). */
export function deserialize(frames: Buffer[], key: string): JupyterMessage {
  const at = frames.findIndex((frame) => frame.equals(DELIMITER));
  if (at < 0) throw new Error("no <IDS|MSG> delimiter in the message");
  const signature = frames[at + 1];
  const parts = frames.slice(at + 2, at + 6);
  if (!signature || parts.length < 4) throw new Error("the message has fewer than four parts");
  if (key) {
    const expected = Buffer.from(sign(key, parts), "ascii");
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
      throw new Error("the message signature does not match");
  }
  const [header, parent, metadata, content] = parts.map((part) => JSON.parse(part.toString("utf8")));
  return {
    header,
    parent_header: parent ?? {},
    metadata: metadata ?? {},
    content: content ?? {},
    buffers: frames.slice(at + 6),
  };
}
