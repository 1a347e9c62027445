import { Button, Card, CopyButton, Group, NumberInput, Stack, Table, Text } from "@mantine/core";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, ok } from "../../api/client";
import type { Endpoint, Template } from "../../api/types";
import { ErrorAlert } from "../../components/page";
import { formatDateTime } from "../../format";

/**
 * Public endpoints: a signed URL (an hour by default) for a port of the sandbox, through
 * GET /sandboxes/{id}/endpoints/{port}; the template's own ports are offered first.
 */
export function Endpoints({ sandboxId, template }: { sandboxId: string; template: Template | undefined }) {
  const [port, setPort] = useState<number | string>(8000);
  const [resolved, setResolved] = useState<Array<Endpoint & { port: number }>>([]);
  const resolve = useMutation({
    mutationFn: async (wanted: number) => ({
      port: wanted,
      ...(await ok(
        api.GET("/sandboxes/{id}/endpoints/{port}", { params: { path: { id: sandboxId, port: wanted } } }),
      )),
    }),
    onSuccess: (endpoint) =>
      setResolved((previous) => [endpoint, ...previous.filter((known) => known.port !== endpoint.port)]),
  });

  return (
    <Stack>
      {template && template.ports.length > 0 && (
        <Card withBorder>
          <Text fw={500} mb="xs">
            Ports this template serves
          </Text>
          {template.ports.map((served) => (
            <Group key={served.port} justify="space-between" py={4}>
              <Text size="sm">
                {served.port} — {served.name}: {served.description}
              </Text>
              <Button size="compact-sm" variant="light" onClick={() => resolve.mutate(served.port)}>
                Get URL
              </Button>
            </Group>
          ))}
        </Card>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (typeof port === "number") resolve.mutate(port);
        }}
      >
        <Group align="flex-end">
          <NumberInput label="Port" min={1} max={65535} value={port} onChange={setPort} w={140} />
          <Button type="submit" loading={resolve.isPending}>
            Get public URL
          </Button>
        </Group>
      </form>
      <Text size="sm" c="dimmed">
        The URL itself is the credential: anyone holding it reaches that port over HTTP until it expires.
      </Text>
      <ErrorAlert error={resolve.error} title="Could not resolve the endpoint" />
      {resolved.length > 0 && (
        <Table.ScrollContainer minWidth={560}>
          <Table aria-label="Public endpoints">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Port</Table.Th>
                <Table.Th>URL</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>Copy</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {resolved.map((endpoint) => (
                <Table.Tr key={endpoint.port}>
                  <Table.Td>{endpoint.port}</Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace" style={{ wordBreak: "break-all" }}>
                      <a href={endpoint.url} target="_blank" rel="noreferrer">
                        {endpoint.url}
                      </a>
                    </Text>
                  </Table.Td>
                  <Table.Td>{formatDateTime(endpoint.expiresAt)}</Table.Td>
                  <Table.Td>
                    <CopyButton value={endpoint.url}>
                      {({ copied, copy }) => (
                        <Button size="compact-xs" variant="light" onClick={copy}>
                          {copied ? "Copied" : "Copy"}
                        </Button>
                      )}
                    </CopyButton>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Stack>
  );
}
