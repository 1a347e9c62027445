import { defineError, Errors } from "@paddock/common";

/** Control-plane error codes (the registry is shared: see @paddock/common errors.ts). */
export const ControlPlaneErrors = {
  emailTaken: defineError("email_taken", 409, "An account with that email already exists."),
  invalidCredentials: defineError("invalid_credentials", 401, "Wrong email or password."),
  rateLimited: defineError(
    "rate_limited",
    429,
    "Too many requests (sign-ups, failed logins, creates, commands, file calls) in a short time; wait the seconds in Retry-After and try again.",
  ),
  keyExpired: defineError("key_expired", 401, "This API key has expired."),
  keyNotFound: defineError("key_not_found", 404, "No API key with that id."),
  scopeForbidden: defineError("scope_forbidden", 403, "This key's scope does not cover this surface."),
  sessionRequired: defineError(
    "session_required",
    403,
    "This operation needs an account session or an unscoped key.",
  ),
  fileNotFound: Errors.fileNotFound,
  invalidPath: defineError(
    "invalid_path",
    400,
    "A path is not absolute or contains a NUL character, which no file name can hold (other Unicode characters, U+202E and U+FEFF included, are allowed).",
  ),
  invalidCommand: defineError(
    "invalid_command",
    400,
    "The command or its environment contains a NUL character, which no process argument can hold.",
  ),
  permissionDenied: Errors.permissionDenied,
  fileConflict: Errors.fileConflict,
  rangeNotSatisfiable: Errors.rangeNotSatisfiable,
  networkPolicyAbsent: defineError(
    "network_policy_absent",
    409,
    "The sandbox was created without a networkPolicy; there is no policy to read or change.",
  ),
  languageUnavailable: Errors.languageUnavailable,
  sandboxNotRunning: defineError(
    "sandbox_not_running",
    409,
    "The sandbox must be Running for this operation.",
  ),
  websocketRequired: defineError(
    "websocket_required",
    426,
    "This path speaks WebSocket only; connect with a WebSocket client (Upgrade: websocket).",
  ),
  secretNotFound: defineError("secret_not_found", 404, "No secret with that name."),
  unknownSecret: defineError(
    "unknown_secret",
    400,
    "The sandbox create names a secret that does not exist; POST /secrets first.",
  ),
  secretTooLarge: defineError("secret_too_large", 413, "A secret value is limited to 64 KiB (UTF-8)."),
  memoryNotFound: defineError("memory_not_found", 404, "No memory entry with that id."),
  memoryTooLarge: defineError(
    "memory_too_large",
    413,
    "A memory entry is limited to 64 KiB of content and 16 KiB of metadata (UTF-8 JSON).",
  ),
  usageLimitReached: defineError(
    "usage_limit_reached",
    402,
    "The account has used the sandbox minutes its plan includes this month; creates and resumes are refused until it moves to a larger plan or the month ends.",
  ),
  billingNotConfigured: defineError(
    "billing_not_configured",
    503,
    "Billing is not configured on this server: set [billing] stripe_secret_key, stripe_webhook_secret and pro_price_id.",
  ),
  billingProviderUnavailable: defineError(
    "billing_provider_unavailable",
    502,
    "Stripe did not accept or did not answer the platform's billing request; try again later.",
  ),
  webhookSignatureInvalid: defineError(
    "webhook_signature_invalid",
    400,
    "The Stripe-Signature header is missing, does not match the body, or is older than the tolerance.",
  ),
  planNotPurchasable: defineError(
    "plan_not_purchasable",
    400,
    "That plan cannot be bought through checkout (the Free plan needs no payment).",
  ),
  alreadySubscribed: defineError(
    "already_subscribed",
    409,
    "The account already has a live subscription to that plan.",
  ),
  paymentCredentialsNotFound: defineError(
    "payment_credentials_not_found",
    404,
    "No payment-provider key is stored for this account; PUT /payments/credentials first.",
  ),
  paymentCredentialsInvalid: defineError(
    "payment_credentials_invalid",
    400,
    "The payment provider refused the key (unknown, revoked or without the needed permissions).",
  ),
  paymentsNotConnected: defineError(
    "payments_not_connected",
    409,
    "The account has no payment-provider key stored; PUT /payments/credentials before calling the provider.",
  ),
  agentKeyNotFound: defineError("agent_key_not_found", 404, "This account has no payments agent key."),
  agentKeyForbidden: defineError(
    "agent_key_forbidden",
    403,
    "A payments agent key only reaches /payments/customers, /payments/invoices and /payments/payment-links.",
  ),
  agentOperationNotAllowed: defineError(
    "agent_operation_not_allowed",
    403,
    "The agent key's limits do not allow this operation.",
  ),
  agentCurrencyNotAllowed: defineError(
    "agent_currency_not_allowed",
    403,
    "The agent key may only use the currency its limits name.",
  ),
  agentAmountOverLimit: defineError(
    "agent_amount_over_limit",
    403,
    "The amount is above the agent key's per-operation cap.",
  ),
  agentTotalLimitReached: defineError(
    "agent_total_limit_reached",
    403,
    "The amount would take the agent key past its total cap.",
  ),
  paymentResourceNotFound: defineError(
    "payment_resource_not_found",
    404,
    "The payment provider has no such object in this account.",
  ),
  paymentProviderRejected: defineError(
    "payment_provider_rejected",
    400,
    "The payment provider refused the request; the detail carries its reason.",
  ),
  paymentProviderUnavailable: defineError(
    "payment_provider_unavailable",
    502,
    "The payment provider did not answer or failed; try again later.",
  ),
} as const;
