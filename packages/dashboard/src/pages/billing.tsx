import { Alert, Badge, Button, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { IconInfoCircle } from "@tabler/icons-react";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { paths } from "paddock/schema";
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

/** The plans on offer, the account's plan, and checkout (Stripe) for a paid one. */
export function BillingPage() {
  const plans = useQuery({ queryKey: ["billing-plans"], queryFn: () => ok(api.GET("/billing/plans")) });
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
      {overview && (
        <>
          {!overview.checkoutAvailable && (
            <Alert color="gray" icon={<IconInfoCircle />} title="Billing is not configured">
              This server has no billing configured, so plans cannot be bought here.
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
