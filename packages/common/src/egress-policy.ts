import { matchesName, parseTarget, type Target, targetKey } from "./egress-targets.js";
import { Errors, PaddockError } from "./errors.js";
import {
  fieldPath,
  invalidField,
  missingProperty,
  notOneOf,
  unknownProperty,
} from "./validation-messages.js";

/**
 * The egress policy and everything that decides with it.
 *
 * Precedence: rules are evaluated in list order and the first rule that matches wins.
 * - A DNS name is matched against domain and wildcard rules; no match → defaultAction.
 * - A destination address is matched against IP/CIDR rules; no match → allowed when it came from
 *   an allowed name's DNS answer, otherwise defaultAction.
 * PATCH puts incoming rules ahead of existing ones (incoming wins), replacing rules with the same
 * target; within one PATCH the first rule for a target wins.
 */

export type Action = "allow" | "deny";
export interface NetworkRule {
  action: Action;
  target: string;
}
export interface NetworkPolicy {
  defaultAction: Action;
  egress: NetworkRule[];
}
export type PolicyMode = "allow_all" | "deny_all" | "enforcing";

/** Rules a policy may hold; beyond this a request answers 413. */
export const MAX_RULES = 1000;

export interface CompiledRule {
  action: Action;
  target: Target;
}

export const allowAll: NetworkPolicy = Object.freeze({ defaultAction: "allow", egress: [] });
export const denyAll: NetworkPolicy = Object.freeze({ defaultAction: "deny", egress: [] });

function invalid(message: string): PaddockError {
  return new PaddockError(Errors.invalidRequest, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const actions: Action[] = ["allow", "deny"];
const ruleFields = ["action", "target"];

/** `where` is the JSON path of the field (`body[0].action`). */
function parseAction(value: unknown, where: string): Action {
  if (value === "allow" || value === "deny") return value;
  throw invalid(notOneOf(where, actions, value));
}

/** One rule, validated and in canonical form (lower case; CIDRs masked to their network). */
export function parseRule(value: unknown, where: string): NetworkRule {
  if (!isObject(value)) throw invalid(invalidField(where, "must be an object {action, target}"));
  const unknown = Object.keys(value).filter((key) => !ruleFields.includes(key));
  for (const field of ruleFields)
    if (value[field] === undefined) throw invalid(missingProperty(where, field, unknown));
  if (unknown[0] !== undefined) throw invalid(unknownProperty(where, unknown[0], ruleFields));
  const action = parseAction(value.action, fieldPath(where, "action"));
  if (typeof value.target !== "string")
    throw invalid(invalidField(fieldPath(where, "target"), "must be string"));
  const target = parseTarget(value.target);
  if (!target) {
    throw invalid(
      invalidField(
        fieldPath(where, "target"),
        `${JSON.stringify(value.target)} is not a domain, *.domain, IP address or CIDR`,
      ),
    );
  }
  return { action, target: targetKey(target) };
}

function checkCount(count: number): void {
  if (count > MAX_RULES) {
    throw new PaddockError(Errors.payloadTooLarge, `a policy holds at most ${MAX_RULES} rules, got ${count}`);
  }
}

/**
 * A whole policy (initial policy). `null`, absent or `{}` means allow all, as the wire spec says.
 * `where` names it in refusals (`body.networkPolicy` when it came in a create request).
 */
export function parsePolicy(value: unknown, where = "policy"): NetworkPolicy {
  if (value === null || value === undefined) return allowAll;
  if (!isObject(value)) throw invalid(invalidField(where, "must be an object {defaultAction, egress}"));
  const unknown = Object.keys(value).filter((key) => key !== "defaultAction" && key !== "egress");
  if (unknown[0] !== undefined)
    throw invalid(unknownProperty(where, unknown[0], ["defaultAction", "egress"]));
  if (value.defaultAction === undefined && value.egress === undefined) return allowAll;
  const defaultAction =
    value.defaultAction === undefined
      ? "deny"
      : parseAction(value.defaultAction, fieldPath(where, "defaultAction"));
  const egress = value.egress ?? [];
  if (!Array.isArray(egress))
    throw invalid(invalidField(fieldPath(where, "egress"), "must be an array of rules"));
  checkCount(egress.length);
  return {
    defaultAction,
    egress: dedupe(egress.map((rule, index) => parseRule(rule, fieldPath(where, "egress", index)))),
  };
}

/** The first rule for each target wins. */
function dedupe(rules: NetworkRule[]): NetworkRule[] {
  const seen = new Set<string>();
  return rules.filter((rule) => !seen.has(rule.target) && seen.add(rule.target));
}

/** PATCH: incoming rules first, existing rules for other targets after them. */
export function mergeRules(policy: NetworkPolicy, body: unknown): NetworkPolicy {
  if (!Array.isArray(body) || body.length === 0) {
    throw invalid(invalidField("body", "must be a non-empty array of rules {action, target}"));
  }
  checkCount(body.length);
  const incoming = dedupe(body.map((rule, index) => parseRule(rule, fieldPath("body", index))));
  const replaced = new Set(incoming.map((rule) => rule.target));
  const egress = [...incoming, ...policy.egress.filter((rule) => !replaced.has(rule.target))];
  checkCount(egress.length);
  return { defaultAction: policy.defaultAction, egress };
}

/** A rule's target given as a string at `where` (`body[2]`, `body.network.allowOut[0]`), or 400. */
export function checkedTarget(value: unknown, where: string): Target {
  const target = typeof value === "string" ? parseTarget(value) : undefined;
  if (!target)
    throw invalid(
      invalidField(where, `${JSON.stringify(value)} is not a domain, *.domain, IP address or CIDR`),
    );
  return target;
}

/** DELETE: removes the rules whose target is listed; unknown targets are ignored. */
export function removeRules(policy: NetworkPolicy, body: unknown): NetworkPolicy {
  if (!Array.isArray(body) || body.length === 0) {
    throw invalid(invalidField("body", "must be a non-empty array of target strings"));
  }
  checkCount(body.length);
  const removed = new Set(
    body.map((value, index) => targetKey(checkedTarget(value, fieldPath("body", index)))),
  );
  return {
    defaultAction: policy.defaultAction,
    egress: policy.egress.filter((rule) => !removed.has(rule.target)),
  };
}

export function policyMode(policy: NetworkPolicy): PolicyMode {
  const opposite = policy.egress.some((rule) => rule.action !== policy.defaultAction);
  if (opposite) return "enforcing";
  return policy.defaultAction === "allow" ? "allow_all" : "deny_all";
}

export function compileRules(policy: NetworkPolicy): CompiledRule[] {
  return policy.egress.map((rule) => ({ action: rule.action, target: parseTarget(rule.target)! }));
}

/** The action for a DNS name (lower case, without the trailing dot). */
export function decideName(rules: CompiledRule[], defaultAction: Action, name: string): Action {
  for (const rule of rules) if (matchesName(rule.target, name)) return rule.action;
  return defaultAction;
}
