import { type ErrorDefinition, PaddockError } from "@paddock/common";
import Stripe from "stripe";
import { ControlPlaneErrors } from "../http/errors.js";

/** Stripe's API is asked to answer within this; a slower provider is reported as unavailable. */
const requestTimeoutMs = 20_000;

/** A failed request is tried once more; a POST keeps the idempotency key the package gave it. */
const networkRetries = 1;

/**
 * A Stripe client for one secret key, speaking to `apiBase` (https://api.stripe.com, or a local
 * stand-in in tests).
 */
export function stripeClient(secretKey: string, apiBase: string): Stripe {
  const base = new URL(apiBase);
  const protocol = base.protocol === "http:" ? "http" : "https";
  return new Stripe(secretKey, {
    host: base.hostname,
    port: base.port ? Number(base.port) : protocol === "http" ? 80 : 443,
    protocol,
    timeout: requestTimeoutMs,
    maxNetworkRetries: networkRetries,
    telemetry: false,
  });
}

/** Stripe's own explanation of a refusal, with the parameter it names. */
function reasonOf(error: Stripe.errors.StripeError): string {
  return `${error.message}${error.param ? ` (parameter ${error.param})` : ""}`;
}

/**
 * A failed call on a user's own key, as a registry error: a refused key, a missing object, a
 * refused request (with Stripe's reason) or an unavailable provider. Other errors pass unchanged.
 */
export function paymentProviderFailure(error: unknown): unknown {
  if (!(error instanceof Stripe.errors.StripeError)) return error;
  const fail = (definition: ErrorDefinition, detail: string) =>
    new PaddockError(definition, detail, { cause: error });
  if (error instanceof Stripe.errors.StripeAuthenticationError) {
    // Stripe's message repeats part of the key: it is not passed on.
    return fail(
      ControlPlaneErrors.paymentCredentialsInvalid,
      "Stripe refused the stored key; PUT /payments/credentials with a current secret key",
    );
  }
  if (error instanceof Stripe.errors.StripePermissionError) {
    return fail(
      ControlPlaneErrors.paymentCredentialsInvalid,
      `Stripe refused the operation for this key's permissions: ${reasonOf(error)}`,
    );
  }
  // An id the account does not have (named in the path, or as a parameter) is a 404 either way.
  if (
    error instanceof Stripe.errors.StripeInvalidRequestError &&
    (error.statusCode === 404 || error.code === "resource_missing")
  ) {
    return fail(ControlPlaneErrors.paymentResourceNotFound, reasonOf(error));
  }
  if (
    error instanceof Stripe.errors.StripeInvalidRequestError ||
    error instanceof Stripe.errors.StripeCardError ||
    error instanceof Stripe.errors.StripeIdempotencyError
  ) {
    return fail(ControlPlaneErrors.paymentProviderRejected, `Stripe refused the request: ${reasonOf(error)}`);
  }
  return fail(
    ControlPlaneErrors.paymentProviderUnavailable,
    `Stripe did not complete the request (${error.type}); try again later`,
  );
}
