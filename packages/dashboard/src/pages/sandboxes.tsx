import {
  Anchor,
  Button,
  Card,
  Group,
  Loader,
  Modal,
  MultiSelect,
  Pagination,
  Select,
  Table,
  Text,
  TextInput,
  VisuallyHidden,
} from "@mantine/core";
import { useDebouncedValue, useDisclosure } from "@mantine/hooks";
import { sandboxStates } from "@paddock/common/contracts";
import { IconPlus } from "@tabler/icons-react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { api, ok } from "../api/client";
import { sandboxKeys } from "../api/sandbox-events";
import { useTemplates } from "../api/sandboxes";
import type { SandboxList } from "../api/types";
import { ErrorAlert, Page } from "../components/page";
import { SandboxActions } from "../components/sandbox-actions";
import { StateBadge } from "../components/state-badge";
import { formatDateTime, formatRelative } from "../format";
import { stateLabel } from "../sleep";
import { CreateSandboxForm } from "./create-sandbox-form";

const pageSize = 20;

/** `name=web, team=a` as the API's metadata filter (`name=web&team=a`); undefined when empty. */
function metadataFilter(text: string): string | undefined {
  const pairs = text
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [key = "", ...value] = pair.split("=");
      return [key.trim(), value.join("=").trim()];
    });
  return pairs.length ? new URLSearchParams(pairs).toString() : undefined;
}

/** The account's sandboxes, live: filters in the URL, so a reload or a shared link keeps them. */
export function SandboxesPage() {
  const [search, setSearch] = useSearchParams();
  const states = search.getAll("state");
  const template = search.get("template") ?? "";
  const [metadataText, setMetadataText] = useState(search.get("metadata") ?? "");
  const [metadata] = useDebouncedValue(metadataText, 400);
  const page = Number(search.get("page") ?? "1") || 1;
  const templates = useTemplates();

  const update = (changes: Record<string, string | string[]>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      next.delete(key);
      for (const item of [value].flat()) if (item) next.append(key, item);
    }
    if (!("page" in changes)) next.delete("page");
    setSearch(next, { replace: true });
  };

  const filter = metadataFilter(metadata);
  const list = useQuery({
    // The sandbox wire's sleep fields are typed in ../api/types.
    queryKey: [...sandboxKeys.all, { states, template, filter, page }],
    queryFn: () =>
      ok(
        api.GET("/sandboxes", {
          params: {
            query: {
              ...(states.length ? { state: states } : {}),
              ...(template ? { template } : {}),
              ...(filter ? { metadata: filter } : {}),
              page,
              pageSize,
            },
          },
        }),
      ) as Promise<SandboxList>,
    placeholderData: keepPreviousData,
  });

  const [creating, { open: openCreate, close: closeCreate }] = useDisclosure(false);

  return (
    <Page
      title="Sandboxes"
      actions={
        <Button leftSection={<IconPlus size={18} />} onClick={openCreate}>
          New sandbox
        </Button>
      }
    >
      <Modal opened={creating} onClose={closeCreate} title="New sandbox" size="lg">
        <CreateSandboxForm />
      </Modal>
      <Group align="flex-end" wrap="wrap">
        <MultiSelect
          label="State"
          placeholder={states.length ? undefined : "Any"}
          data={[...sandboxStates]}
          value={states}
          onChange={(value) => update({ state: value })}
          clearable
          w={260}
        />
        <Select
          label="Template"
          placeholder="Any"
          data={(templates.data ?? []).map(({ id, name }) => ({ value: id, label: name }))}
          value={template || null}
          onChange={(value) => update({ template: value ?? "" })}
          clearable
          w={200}
        />
        <TextInput
          label="Metadata"
          placeholder="name=web, team=a"
          value={metadataText}
          onChange={(event) => {
            setMetadataText(event.currentTarget.value);
            update({ metadata: event.currentTarget.value });
          }}
          w={240}
        />
        {list.isFetching && <Loader size="sm" aria-label="Refreshing" />}
      </Group>
      <ErrorAlert error={list.error} title="Could not list sandboxes" />
      <Card withBorder padding={0}>
        <Table.ScrollContainer minWidth={960}>
          <Table highlightOnHover verticalSpacing="sm" aria-label="Sandboxes">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Sandbox</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Template</Table.Th>
                <Table.Th>Metadata</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>Last activity</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data?.items.map((sandbox) => (
                <Table.Tr key={sandbox.id} data-sandbox-id={sandbox.id}>
                  <Table.Td>
                    <Anchor
                      component={Link}
                      to={`/sandboxes/${sandbox.id}`}
                      ff="monospace"
                      size="sm"
                      style={{ whiteSpace: "nowrap" }}
                    >
                      {sandbox.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <StateBadge state={sandbox.state} label={stateLabel(sandbox)} />
                  </Table.Td>
                  <Table.Td>{sandbox.template ?? "—"}</Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace">
                      {Object.entries(sandbox.metadata)
                        .map(([key, value]) => `${key}=${value}`)
                        .join(", ") || "—"}
                    </Text>
                  </Table.Td>
                  <Table.Td>{formatDateTime(sandbox.createdAt)}</Table.Td>
                  <Table.Td>{sandbox.expiresAt ? formatRelative(sandbox.expiresAt) : "never"}</Table.Td>
                  <Table.Td>
                    {sandbox.lastActivityAt ? formatRelative(sandbox.lastActivityAt) : "—"}
                    {sandbox.state === "Running" && (
                      <Text size="xs" c="dimmed" data-testid="idles-out">
                        {sandbox.idleAt ? `idles out ${formatRelative(sandbox.idleAt)}` : "never idles out"}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <SandboxActions sandbox={sandbox} menu />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {list.data && list.data.items.length === 0 && (
          <Text p="lg" c="dimmed" ta="center">
            {states.length || template || filter
              ? "No sandbox matches these filters."
              : "No sandboxes yet. Create one to get a shell, files and code in seconds."}
          </Text>
        )}
      </Card>
      {list.data && list.data.pagination.totalPages > 1 && (
        <Pagination
          total={list.data.pagination.totalPages}
          value={page}
          onChange={(value) => update({ page: String(value) })}
          getControlProps={(control) => ({ "aria-label": `${control} page` })}
        />
      )}
    </Page>
  );
}
