import { PaddockError } from "@paddock/common";
import Stripe from "stripe";
import { describe, expect, test } from "vitest";
import { maskKey } from "../payments/payment-credentials.js";
import { paymentProviderFailure } from "./stripe-client.js";

const codeOf = (error: unknown) => (error instanceof PaddockError ? [error.status, error.code] : error);

describe("Stripe failures as registry errors", () => {
  test("each kind of refusal has its code; Stripe's text about a key is not passed on", () => {
    const auth = paymentProviderFailure(
      new Stripe.errors.StripeAuthenticationError({ message: "Invalid API Key provided: sk_test_****1234" }),
    );
    expect(codeOf(auth)).toEqual([400, "payment_credentials_invalid"]);
    expect((auth as Error).message).not.toContain("sk_test");
    const missingInPath = new Stripe.errors.StripeInvalidRequestError({
      message: "No such invoice: 'in_1'",
      code: "resource_missing",
      statusCode: 404,
    });
    expect(codeOf(paymentProviderFailure(missingInPath))).toEqual([404, "payment_resource_not_found"]);
    const missingParameter = new Stripe.errors.StripeInvalidRequestError({
      message: "No such customer: 'cus_1'",
      code: "resource_missing",
      param: "customer",
      statusCode: 400,
    });
    expect(codeOf(paymentProviderFailure(missingParameter))).toEqual([404, "payment_resource_not_found"]);
    const refused = paymentProviderFailure(
      new Stripe.errors.StripeInvalidRequestError({
        message: "Invalid currency",
        param: "currency",
        statusCode: 400,
      }),
    );
    expect(codeOf(refused)).toEqual([400, "payment_provider_rejected"]);
    expect((refused as Error).message).toContain("Invalid currency (parameter currency)");
    expect(codeOf(paymentProviderFailure(new Stripe.errors.StripeAPIError({ message: "boom" })))).toEqual([
      502,
      "payment_provider_unavailable",
    ]);
    expect(
      codeOf(paymentProviderFailure(new Stripe.errors.StripeConnectionError({ message: "refused" }))),
    ).toEqual([502, "payment_provider_unavailable"]);
    const other = new TypeError("a bug");
    expect(paymentProviderFailure(other)).toBe(other);
  });

  test("a key is shown by its kind and last four characters only", () => {
    expect(maskKey("sk_test_51HabcdefghijklmnoP1234")).toBe("sk_test_…1234");
    expect(maskKey("rk_live_abcdefghijklmnop9876")).toBe("rk_live_…9876");
  });
});
