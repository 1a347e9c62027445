import { Alert, Badge, Button, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { IconCircleCheck, IconInfoCircle } from "@tabler/icons-react";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { paths } from "paddock/schema";
import { useState } from "react";
import { useSearchParams } from "react-router";
import { api, ok } from "../api/client";
import type { Plans } from "../api/types";
import { ErrorAlert, Page } from "../components/page";

type Plan = Plans["items"][number];
type CheckoutPlan = paths["/billing/checkout"]["post"]["requestBody"]["content"]["application/json"]["plan"];

/** A monthly price given in the currency's smallest unit (cents for USD, yen for JPY). */
function formatPrice(plan: Plan): string {
  const format = new Intl.NumberFormat(undefined, { style: "currency", currency: plan.currency });
  const fractionDigits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(plan.priceCents / 10 ** fractionDigits);
}

/** The account's plan among those on offer. */
const currentPlan = (overview: Plans) => overview.items.find((plan) => plan.id === overview.current.plan);
const onPaidPlan = (overview: Plans) => (currentPlan(overview)?.priceCents ?? 0) > 0;

/** How long the page waits, after a paid checkout, for Stripe's confirmation to change the plan. */
const confirmationWaitMs = 5 * 60_000;

/**
 * The plans on offer, the account's plan, and checkout (Stripe) for a paid one. Back from the
 * checkout (`?checkout=success` or `cancel`), it says how that went; after a payment it asks again
 * every two seconds until Stripe's webhook has changed the plan.
 */
export function BillingPage() {
  const [search, setSearch] = useSearchParams();
  const returned = search.get("checkout");
  const [returnedAt] = useState(Date.now);
  const plans = useQuery({
    queryKey: ["billing-plans"],
    queryFn: () => ok(api.GET("/billing/plans")),
    refetchInterval: (query) =>
      returned === "success" &&
      query.state.data &&
      !onPaidPlan(query.state.data) &&
      Date.now() - returnedAt < confirmationWaitMs
        ? 2000
        : false,
  });
  const checkout = useMutation({
    // /billing/plans types plan ids as strings; checkout takes the same ids as an enum.
    mutationFn: (plan: Plan) =>
      ok(api.POST("/billing/checkout", { body: { plan: plan.id as CheckoutPlan } })),
    // The plan changes when Stripe reports the payment, not here: the browser goes to pay.
    onSuccess: (session) => window.location.assign(session.url),
  });
  const overview = plans.data;
  const status = overview?.current.subscriptionStatus;
  return (
    <Page title="Billing">
      <ErrorAlert error={plans.error} title="Could not load the plans" />
      <ErrorAlert error={checkout.error} title="Could not start the checkout" />
      {overview && returned === "success" && (
        <Alert
          color="green"
          icon={<IconCircleCheck />}
          title={onPaidPlan(overview) ? "Your plan is upgraded" : "Payment received"}
          role="status"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setSearch({}, { replace: true })}
        >
          {onPaidPlan(overview)
            ? `Thank you: you are on the ${currentPlan(overview)?.name} plan.`
            : "Thank you. Your plan changes as soon as Stripe confirms the payment, usually within seconds; this page follows it."}
        </Alert>
      )}
      {returned === "cancel" && (
        <Alert
          color="gray"
          icon={<IconInfoCircle />}
          title="Checkout cancelled"
          role="status"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setSearch({}, { replace: true })}
        >
          Nothing was charged, and your plan is as it was.
        </Alert>
      )}
      {overview && (
        <>
          {!overview.checkoutAvailable && (
            <Alert color="gray" icon={<IconInfoCircle />} title="Billing is not configured">
              This server has no billing configured, so plans cannot be bought here. Its operator enables
              checkout with Stripe's keys in the configuration's [billing] section.
            </Alert>
          )}
          {status === "past_due" && (
            <Alert color="yellow" title="Payment failed" role="alert">
              Your last payment did not go through. You keep your plan while Stripe retries it.
            </Alert>
          )}
          <Text size="sm">Subscription: {status ? status.replaceAll("_", " ") : "none"}</Text>
          <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }}>
            {overview.items.map((plan) => {
              const current = plan.id === overview.current.plan;
              return (
                <Card
                  key={plan.id}
                  withBorder
                  padding="lg"
                  bd={current ? "2px solid var(--mantine-primary-color-filled)" : undefined}
                >
                  <Stack gap="sm" h="100%">
                    <Group justify="space-between">
                      <Title order={2} size="h3">
                        {plan.name}
                      </Title>
                      {current && <Badge>Current plan</Badge>}
                    </Group>
                    <Text size="xl" fw={700}>
                      {formatPrice(plan)}{" "}
                      <Text span size="sm" c="dimmed" fw={400}>
                        a month
                      </Text>
                    </Text>
                    <Text>
                      {plan.includedMinutes === null
                        ? "Unlimited sandbox minutes"
                        : `${plan.includedMinutes} sandbox minutes a month`}
                    </Text>
                    {plan.priceCents > 0 && !current && (
                      <Button
                        mt="auto"
                        disabled={!overview.checkoutAvailable}
                        // Still loading once answered: the browser is on its way to Stripe.
                        loading={!checkout.isIdle && !checkout.isError && checkout.variables?.id === plan.id}
                        onClick={() => checkout.mutate(plan)}
                      >
                        Upgrade to {plan.name}
                      </Button>
                    )}
                  </Stack>
                </Card>
              );
            })}
          </SimpleGrid>
        </>
      )}
    </Page>
  );
}
