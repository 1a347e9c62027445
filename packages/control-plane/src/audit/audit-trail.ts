import type { PaddockError } from "@paddock/common";
import { type AuditActor, AuditLog, type AuditTarget, type Db, type NewAuditEvent } from "@paddock/db";
import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import type { RateCounters } from "../http/rate-limit.js";
import type { Principal } from "../identity/identity.js";

type Details = NewAuditEvent["details"];

/** At most one `limit.hit` per account and limit in this many seconds, across replicas. */
export const limitHitWindowSeconds = 60;

/**
 * What the control plane writes to the audit log (decision 0204): events done by the caller of a
 * request, with who it was (session or key, and the client address), and the account limits it
 * ran into, throttled so a flood of refusals stays one event a minute per limit.
 */
export class AuditTrail {
  readonly log: AuditLog;

  constructor(
    private readonly db: Db,
    private readonly counters: RateCounters,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.log = new AuditLog(db);
  }

  /** Records an event the authenticated caller of `request` caused. */
  record(
    request: FastifyRequest,
    principal: Principal,
    type: string,
    target?: AuditTarget,
    details?: Details,
  ): Promise<void> {
    return this.recordFor(principal, request.ip, type, target, details);
  }

  /** Records an event `principal` caused from `address` (another surface's request). */
  async recordFor(
    principal: Principal,
    address: string,
    type: string,
    target?: AuditTarget,
    details?: Details,
  ): Promise<void> {
    await this.log.append({
      accountId: principal.accountId,
      type,
      actor: await this.actorOf(principal, address),
      target: target ?? null,
      details: details ?? {},
    });
  }

  /** Records an event of an account the caller is not signed in to yet (sign-up, login). */
  async recordUnauthenticated(
    request: FastifyRequest,
    accountId: string,
    type: string,
    kind: "password" | "anonymous",
    details?: Details,
  ): Promise<void> {
    await this.log.append({
      accountId,
      type,
      actor: { kind, address: request.ip },
      target: { type: "account", id: accountId },
      details: details ?? {},
    });
  }

  /** A wrong password for an existing account's email; an unknown email names no account. */
  async loginFailed(request: FastifyRequest, email: string): Promise<void> {
    const account = await this.db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", email.trim().toLowerCase())
      .executeTakeFirst();
    if (account) await this.recordUnauthenticated(request, account.id, "auth.login_failed", "password");
  }

  /**
   * An account limit refused the caller's request: recorded once per limit a minute. Never
   * fails the request it describes (its answer is already the refusal).
   */
  async limitHit(request: FastifyRequest, error: PaddockError): Promise<void> {
    const principal = request.principal;
    const limit = limitOf(error);
    if (!principal || !limit) return;
    try {
      const wait = await this.counters.hit([
        {
          key: `audit-limit:${principal.accountId}:${limit}`,
          rule: { limit: 1, windowSeconds: limitHitWindowSeconds },
        },
      ]);
      if (wait > 0) return;
      await this.record(
        request,
        principal,
        "limit.hit",
        { type: "limit", name: limit },
        {
          code: error.code,
          method: request.method,
          route: request.routeOptions.url ?? null,
        },
      );
    } catch (writeError) {
      this.logger.warn({ err: writeError }, "recording a limit hit in the audit log failed");
    }
  }

  private async actorOf(principal: Principal, address: string): Promise<AuditActor> {
    if (principal.via === "session") {
      // A short handle of the session's hash tells sessions apart; the token itself is never kept.
      return { kind: "session", id: `session:${principal.credential.slice(0, 12)}`, address };
    }
    const key = await this.db
      .selectFrom("api_keys")
      .select("name")
      .where("id", "=", principal.credential)
      .executeTakeFirst();
    return { kind: "key", id: principal.credential, name: key?.name ?? null, address };
  }
}

/** Which account limit (decision 0170) an error is the refusal of, if any. */
export function limitOf(error: PaddockError): string | null {
  switch (error.code) {
    case "rate_limited": {
      const call = /^too many (sandbox creates|commands|file calls)\b/.exec(error.message)?.[1];
      // Failed logins and sign-ups are throttled per email and address, not account limits.
      return call ? `${call.replace("sandbox ", "").replace(" ", "_")}_rate` : null;
    }
    case "quota_exceeded": {
      const kind = /^(sandbox|disk|volume|API key) limit\b/.exec(error.message)?.[1];
      const names: Record<string, string> = {
        sandbox: "sandboxes",
        disk: "disk",
        volume: "volumes",
        "API key": "api_keys",
      };
      return kind ? (names[kind] ?? "quota") : "quota";
    }
    case "template_limit_reached":
      return error.message.includes("builds") ? "template_builds" : "templates";
    case "usage_limit_reached":
      return "minutes";
    default:
      return null;
  }
}
