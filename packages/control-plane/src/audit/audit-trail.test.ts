import { Errors, PaddockError } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { ControlPlaneErrors } from "../http/errors.js";
import { limitOf } from "./audit-trail.js";

describe("limitOf names the account limit a refusal is for", () => {
  test.each([
    [Errors.quotaExceeded, "sandbox limit: the free plan allows 5 sandboxes at once", "sandboxes"],
    [Errors.quotaExceeded, "disk limit: the free plan allows 50 GiB of disk", "disk"],
    [Errors.quotaExceeded, "volume limit: the free plan allows 5 volumes", "volumes"],
    [Errors.quotaExceeded, "API key limit: the free plan allows 20 API keys", "api_keys"],
    [Errors.quotaExceeded, "something new", "quota"],
    [Errors.templateLimitReached, "the account holds 10 templates, as many as its plan allows", "templates"],
    [
      Errors.templateLimitReached,
      "the account runs 2 builds, as many at once as its plan allows",
      "template_builds",
    ],
    [ControlPlaneErrors.usageLimitReached, "the plan's minutes are used up", "minutes"],
    [ControlPlaneErrors.rateLimited, "too many sandbox creates: at most 10 per key", "creates_rate"],
    [ControlPlaneErrors.rateLimited, "too many commands: at most 100 per key", "commands_rate"],
    [ControlPlaneErrors.rateLimited, "too many file calls: at most 200 per key", "file_calls_rate"],
  ])("%o %s → %s", (definition, message, limit) => {
    expect(limitOf(new PaddockError(definition, message))).toBe(limit);
  });

  test("throttles on addresses and emails, and other errors, are no account limit", () => {
    expect(
      limitOf(new PaddockError(ControlPlaneErrors.rateLimited, "too many failed logins; retry in 5 s")),
    ).toBeNull();
    expect(
      limitOf(new PaddockError(ControlPlaneErrors.rateLimited, "too many sign-ups from this address")),
    ).toBeNull();
    expect(limitOf(new PaddockError(Errors.sandboxNotFound))).toBeNull();
  });
});
