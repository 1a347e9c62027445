import { LineChart } from "@mantine/charts";
import {
  Alert,
  Anchor,
  Group,
  Pagination,
  Paper,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from "@mantine/core";
import { IconAlertTriangle } from "@tabler/icons-react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { api, ok } from "../api/client";
import type { UsageSummary } from "../api/types";
import { useUsage } from "../api/usage";
import { ErrorAlert, Page } from "../components/page";
import { StateBadge } from "../components/state-badge";
import { formatDateTime, formatDuration, formatMinutes } from "../format";

// Minutes move while a sandbox runs: ask again while the page is watched.
const refetchInterval = 10_000;
const dayMs = 86_400_000;
const dayLabel = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

/** The minutes used by the end of each day of the period; days still to come have none. */
function cumulativeDays(usage: UsageSummary): Array<{ day: string; minutes: number | null }> {
  const byDate = new Map(usage.days.map((day) => [day.date, day.minutes]));
  const lastDate = usage.days.at(-1)?.date ?? "";
  const points = [];
  let total = 0;
  for (let time = Date.parse(usage.period.start); time < Date.parse(usage.period.end); time += dayMs) {
    const date = new Date(time).toISOString().slice(0, 10);
    total += byDate.get(date) ?? 0;
    points.push({
      day: dayLabel.format(time),
      minutes: date <= lastDate ? Math.round(total * 100) / 100 : null,
    });
  }
  return points;
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <Paper withBorder p="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
    </Paper>
  );
}

/** This month's sandbox minutes against the plan's allowance, and which sandboxes used them. */
export function UsagePage() {
  const summary = useUsage({ refetchInterval });
  const usage = summary.data;
  const included = usage?.includedMinutes ?? null;
  return (
    <Page title="Usage">
      <ErrorAlert error={summary.error} title="Could not load usage" />
      {usage && (
        <>
          {usage.limitReached && (
            <Alert color="red" icon={<IconAlertTriangle />} title="Limit reached" role="alert">
              This month's {formatMinutes(included ?? 0)} included minutes are used: new sandboxes and resumes
              are refused until {formatDateTime(usage.period.end)}.{" "}
              <Anchor component={Link} to="/billing">
                See the plans
              </Anchor>
            </Alert>
          )}
          <SimpleGrid cols={{ base: 2, sm: 4 }}>
            <Figure label="Plan" value={usage.plan.name} />
            <Figure label="Used" value={`${formatMinutes(usage.usedMinutes)} min`} />
            <Figure
              label="Included"
              value={included === null ? "Unlimited" : `${formatMinutes(included)} min`}
            />
            <Figure
              label="Remaining"
              value={
                usage.remainingMinutes === null ? "Unlimited" : `${formatMinutes(usage.remainingMinutes)} min`
              }
            />
          </SimpleGrid>
          {included !== null && (
            <Progress
              size="lg"
              value={included > 0 ? Math.min(100, (usage.usedMinutes / included) * 100) : 100}
              color={usage.limitReached ? "red" : undefined}
              aria-label="Included minutes used"
            />
          )}
          <Text size="sm" c="dimmed">
            {usage.runningSandboxes} sandbox{usage.runningSandboxes === 1 ? "" : "es"} running now. The month
            (UTC) ends {formatDateTime(usage.period.end)}.
          </Text>
          <Text size="sm" c="dimmed" data-testid="plan-idle-policy">
            On your plan a sandbox created without its own settings{" "}
            {usage.plan.lifecycle.idleTimeout === null
              ? "never pauses for want of use"
              : `pauses after ${formatDuration(usage.plan.lifecycle.idleTimeout)} idle`}
            {usage.plan.lifecycle.maxPaused === null
              ? ", and is kept however long it stays paused."
              : ` and is deleted after ${formatDuration(usage.plan.lifecycle.maxPaused)} paused.`}
          </Text>
          <Title order={2} size="h4">
            Minutes used this month
          </Title>
          <LineChart
            h={260}
            data={cumulativeDays(usage)}
            dataKey="day"
            series={[{ name: "minutes", label: "Minutes used", color: "blue.6" }]}
            curveType="linear"
            withDots={false}
            valueFormatter={formatMinutes}
            yAxisProps={{ allowDecimals: false, tickFormatter: (value: number) => String(Math.round(value)) }}
            referenceLines={
              included === null
                ? []
                : [{ y: included, label: "Included", color: "red.6", ifOverflow: "extendDomain" }]
            }
            role="img"
            aria-label={`Cumulative minutes by day: ${formatMinutes(usage.usedMinutes)} used${
              included === null ? "" : ` of ${formatMinutes(included)} included`
            }`}
          />
        </>
      )}
      <SandboxUsageTable />
    </Page>
  );
}

function SandboxUsageTable() {
  const [page, setPage] = useState(1);
  const sandboxes = useQuery({
    queryKey: ["usage-sandboxes", page],
    queryFn: () => ok(api.GET("/usage/sandboxes", { params: { query: { page } } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
  const items = sandboxes.data?.items ?? [];
  const totalPages = sandboxes.data?.pagination.totalPages ?? 0;
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Sandboxes this month
      </Title>
      <ErrorAlert error={sandboxes.error} title="Could not load usage per sandbox" />
      {sandboxes.isSuccess && items.length === 0 && <Text c="dimmed">No sandbox has run this month.</Text>}
      {items.length > 0 && (
        <Table.ScrollContainer minWidth={600}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Sandbox</Table.Th>
                <Table.Th>Template</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th ta="right">Minutes</Table.Th>
                <Table.Th>Running</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((sandbox) => (
                <Table.Tr key={sandbox.sandboxId}>
                  <Table.Td>
                    <Anchor component={Link} to={`/sandboxes/${sandbox.sandboxId}`} ff="monospace" size="sm">
                      {sandbox.sandboxId}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{sandbox.template ?? "—"}</Table.Td>
                  <Table.Td>
                    <StateBadge state={sandbox.state} />
                  </Table.Td>
                  <Table.Td ta="right">{formatMinutes(sandbox.minutes)}</Table.Td>
                  <Table.Td>{sandbox.running ? "Yes, counting" : "No"}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {totalPages > 1 && (
        <Group justify="center">
          <Pagination
            total={totalPages}
            value={page}
            onChange={setPage}
            getControlProps={(control) => ({ "aria-label": `${control} page` })}
          />
        </Group>
      )}
    </Stack>
  );
}
