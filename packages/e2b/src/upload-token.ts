import { createHmac } from "node:crypto";
import { safeEqual } from "@paddock/common";

/** How long an upload link works: the SDK uploads as soon as it has one. */
export const uploadLinkSeconds = 900;

/** What an upload link grants: one account's files of one hash, for one of its templates. */
export interface UploadGrant {
  accountId: string;
  templateId: string;
  hash: string;
}

function signature(secretKey: string, grant: UploadGrant, expires: number): string {
  return createHmac("sha256", secretKey)
    .update(`e2b-template-files\n${grant.accountId}\n${grant.templateId}\n${grant.hash}\n${expires}`)
    .digest("base64url");
}

/**
 * The token of an upload link (`<expires>.<account>.<signature>`): E2B's SDK PUTs its files to the
 * URL it was given, without its API key, so the URL itself is the credential.
 */
export function issueUploadToken(secretKey: string, grant: UploadGrant, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + uploadLinkSeconds;
  return `${expires}.${grant.accountId}.${signature(secretKey, grant, expires)}`;
}

/** The account a token was issued to, when it is this server's, for this template and hash, and unexpired. */
export function verifyUploadToken(
  secretKey: string,
  token: string,
  upload: { templateId: string; hash: string },
  now = Date.now(),
): string | undefined {
  const parts = /^(\d{1,12})\.([A-Za-z0-9_-]{1,128})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!parts) return undefined;
  const [, expiresText, accountId, given] = parts as unknown as [string, string, string, string];
  const expires = Number(expiresText);
  if (expires * 1000 <= now) return undefined;
  return safeEqual(given, signature(secretKey, { accountId, ...upload }, expires)) ? accountId : undefined;
}
