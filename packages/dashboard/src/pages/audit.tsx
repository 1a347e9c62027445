import { Button, Card, Code, Group, Select, Table, Text } from "@mantine/core";
import { useState } from "react";
import { type AuditEvent, useAuditLog } from "../api/audit";
import { ErrorAlert, Page } from "../components/page";
import { formatDateTime } from "../format";

/** The filter's choices: every family of event types, by its prefix. */
const families = [
  { value: "account.", label: "Account" },
  { value: "auth.", label: "Logins" },
  { value: "key.", label: "API keys" },
  { value: "secret.", label: "Secrets" },
  { value: "sandbox.", label: "Sandboxes" },
  { value: "template.", label: "Templates" },
  { value: "limit.", label: "Limits hit" },
  { value: "payments.", label: "Payments" },
  { value: "plan.", label: "Plan" },
];

/** The account's audit log: who did what, from where, newest first (decision 0204). */
export function AuditPage() {
  const [type, setType] = useState<string | null>(null);
  const log = useAuditLog(type);
  const events = log.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Page title="Audit log">
      <Text size="sm" c="dimmed">
        Security-relevant events of this account: sign-ins, keys, secrets, sandboxes, templates, limits hit,
        payments and plan changes. Nothing here can be changed or deleted.
      </Text>
      <Group>
        <Select
          label="Type"
          placeholder="Every type"
          data={families}
          value={type}
          onChange={setType}
          clearable
          w={220}
        />
      </Group>
      <ErrorAlert error={log.error} title="Could not load the audit log" />
      <Card withBorder padding={0}>
        <Table.ScrollContainer minWidth={820}>
          <Table striped verticalSpacing="xs" aria-label="Audit log">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time</Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Actor</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Target</Table.Th>
                <Table.Th>Details</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {events.map((event) => (
                <EventRow key={event.id} event={event} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {log.isSuccess && events.length === 0 && (
          <Text p="lg" c="dimmed" ta="center">
            No events{type ? " of this type" : ""}.
          </Text>
        )}
      </Card>
      {log.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => void log.fetchNextPage()} loading={log.isFetchingNextPage}>
            Older events
          </Button>
        </Group>
      )}
    </Page>
  );
}

function EventRow({ event }: { event: AuditEvent }) {
  const actor = [event.actor.kind, event.actor.name ?? event.actor.id].filter(Boolean).join(" ");
  const target = event.target
    ? [event.target.type, event.target.name ?? event.target.id].filter(Boolean).join(" ")
    : "—";
  const details = Object.entries(event.details)
    .map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
  return (
    <Table.Tr data-event-type={event.type}>
      <Table.Td>{formatDateTime(event.at)}</Table.Td>
      <Table.Td>
        <Code>{event.type}</Code>
      </Table.Td>
      <Table.Td>{actor}</Table.Td>
      <Table.Td ff="monospace">{event.actor.address ?? "—"}</Table.Td>
      <Table.Td>{target}</Table.Td>
      <Table.Td>
        <Text size="sm" lineClamp={2}>
          {details || "—"}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}
