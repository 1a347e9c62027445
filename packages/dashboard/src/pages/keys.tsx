import {
  ActionIcon,
  Alert,
  Button,
  CopyButton,
  Group,
  Modal,
  Radio,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  VisuallyHidden,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { useDisclosure } from "@mantine/hooks";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { IconPlus, IconRefresh, IconTrash } from "@tabler/icons-react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, ok } from "../api/client";
import type { ApiKey, ApiKeyWithSecret } from "../api/types";
import { ErrorAlert, Page } from "../components/page";
import { formatDateTime, formatRelative } from "../format";

const keysKey = ["keys"];
const columns = ["Name", "Prefix", "Scope", "Created", "Expires", "Last used"];

const scopes = [
  { value: "all", label: "All surfaces", description: "Sandboxes, memory and secrets, and managing keys." },
  { value: "sandboxes", label: "Sandboxes only", description: "Create and use sandboxes; nothing else." },
  { value: "memory", label: "Memory only", description: "Add, list and search memory; nothing else." },
  { value: "secrets", label: "Secrets only", description: "Set, list and delete secrets; nothing else." },
] as const;

type ScopeChoice = (typeof scopes)[number]["value"];

function keyName(key: ApiKey): string {
  return key.name ?? key.prefix;
}

const consequences = {
  Rotate: "Its current secret stops working at once; whatever uses it needs the new one.",
  Delete: "Calls with this key are refused from now on. This cannot be undone.",
};

function confirmAction(action: keyof typeof consequences, key: ApiKey, onConfirm: () => void) {
  modals.openConfirmModal({
    title: `${action} ${keyName(key)}?`,
    children: <Text size="sm">{consequences[action]}</Text>,
    labels: { confirm: action, cancel: "Cancel" },
    confirmProps: { color: "red" },
    onConfirm,
  });
}

/** The account's API keys: created, rotated and deleted here; a secret is shown once, never again. */
export function KeysPage() {
  const queryClient = useQueryClient();
  const [creating, { open: openCreate, close: closeCreate }] = useDisclosure();
  const [revealed, setRevealed] = useState<ApiKeyWithSecret>();
  const keys = useQuery({ queryKey: keysKey, queryFn: () => ok(api.GET("/keys")) });
  const reveal = (answer: ApiKeyWithSecret, done: "created" | "rotated") => {
    void queryClient.invalidateQueries({ queryKey: keysKey });
    setRevealed(answer);
    notifications.show({ color: "green", message: `Key ${keyName(answer.key)} ${done}.` });
  };

  const rotate = useMutation({
    mutationFn: (key: ApiKey) => ok(api.POST("/keys/{id}/rotate", { params: { path: { id: key.id } } })),
    onSuccess: (rotated) => reveal(rotated, "rotated"),
  });
  const remove = useMutation({
    mutationFn: (key: ApiKey) => ok(api.DELETE("/keys/{id}", { params: { path: { id: key.id } } })),
    onSuccess: (_, key) => {
      void queryClient.invalidateQueries({ queryKey: keysKey });
      notifications.show({ color: "green", message: `Key ${keyName(key)} deleted.` });
    },
  });

  const items = keys.data?.items ?? [];
  return (
    <Page
      title="API keys"
      actions={
        <Button leftSection={<IconPlus size={18} />} onClick={openCreate}>
          Create key
        </Button>
      }
    >
      <ErrorAlert error={keys.error} title="Could not load the keys" />
      <ErrorAlert error={rotate.error} title="Could not rotate the key" />
      <ErrorAlert error={remove.error} title="Could not delete the key" />
      {keys.isSuccess && items.length === 0 && (
        <Text c="dimmed">No API keys yet. Create one to call Paddock from the SDKs or the CLI.</Text>
      )}
      {items.length > 0 && (
        <Table.ScrollContainer minWidth={760}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                {columns.map((column) => (
                  <Table.Th key={column}>{column}</Table.Th>
                ))}
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td c={key.name ? undefined : "dimmed"}>{key.name ?? "Unnamed"}</Table.Td>
                  <Table.Td ff="monospace">{key.prefix}…</Table.Td>
                  <Table.Td>{key.scope ?? "all surfaces"}</Table.Td>
                  <Table.Td>{formatDateTime(key.createdAt)}</Table.Td>
                  <Table.Td>{key.expiresAt ? formatDateTime(key.expiresAt) : "Never"}</Table.Td>
                  <Table.Td>{key.lastUsedAt ? formatRelative(key.lastUsedAt) : "Never"}</Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap" justify="flex-end">
                      <ActionIcon
                        variant="subtle"
                        aria-label={`Rotate ${keyName(key)}`}
                        onClick={() => confirmAction("Rotate", key, () => rotate.mutate(key))}
                      >
                        <IconRefresh size={18} />
                      </ActionIcon>
                      <ActionIcon
                        variant="subtle"
                        color="red"
                        aria-label={`Delete ${keyName(key)}`}
                        onClick={() => confirmAction("Delete", key, () => remove.mutate(key))}
                      >
                        <IconTrash size={18} />
                      </ActionIcon>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal opened={creating} onClose={closeCreate} title="Create an API key">
        <CreateKeyForm
          onCreated={(created) => {
            closeCreate();
            reveal(created, "created");
          }}
        />
      </Modal>
      <SecretModal revealed={revealed} onClose={() => setRevealed(undefined)} />
    </Page>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (created: ApiKeyWithSecret) => void }) {
  const form = useForm({
    initialValues: {
      name: "",
      scope: "all" as ScopeChoice,
      expiresAt: "",
      format: "paddock" as "paddock" | "e2b",
    },
    validate: {
      // datetime-local has no time zone: the browser reads it as local time.
      expiresAt: (value) => (!value || Date.parse(value) > Date.now() ? null : "Pick a moment in the future"),
    },
  });
  const create = useMutation({
    mutationFn: (values: typeof form.values) =>
      ok(
        api.POST("/keys", {
          body: {
            format: values.format,
            ...(values.name.trim() ? { name: values.name.trim() } : {}),
            ...(values.scope !== "all" ? { scope: values.scope } : {}),
            ...(values.expiresAt ? { expiresAt: new Date(values.expiresAt).toISOString() } : {}),
          },
        }),
      ),
    onSuccess: onCreated,
  });
  return (
    <form onSubmit={form.onSubmit((values) => create.mutate(values))} noValidate>
      <Stack>
        <ErrorAlert error={create.error} title="Could not create the key" />
        <TextInput
          label="Name"
          description="Optional: where the key is used"
          {...form.getInputProps("name")}
        />
        <Radio.Group
          label="Scope"
          description="A scoped key works on one surface only"
          {...form.getInputProps("scope")}
        >
          <Stack gap="xs" mt="xs">
            {scopes.map((scope) => (
              <Radio
                key={scope.value}
                value={scope.value}
                label={scope.label}
                description={scope.description}
              />
            ))}
          </Stack>
        </Radio.Group>
        <TextInput
          type="datetime-local"
          label="Expires"
          description="Optional, in your local time; leave empty for a key that does not expire"
          {...form.getInputProps("expiresAt")}
        />
        <Select
          label="Format"
          description="Both work everywhere; pick e2b for E2B's SDKs"
          data={[
            { value: "paddock", label: "Paddock (pk_…)" },
            { value: "e2b", label: "E2B (e2b_…)" },
          ]}
          allowDeselect={false}
          {...form.getInputProps("format")}
        />
        <Button type="submit" loading={create.isPending}>
          Create key
        </Button>
      </Stack>
    </form>
  );
}

/** The secret of a key just created or rotated: the only time the API ever returns it. */
function SecretModal({ revealed, onClose }: { revealed: ApiKeyWithSecret | undefined; onClose: () => void }) {
  return (
    <Modal
      opened={revealed !== undefined}
      onClose={onClose}
      title={revealed ? `Secret of ${keyName(revealed.key)}` : ""}
      closeOnClickOutside={false}
    >
      {revealed && (
        <Stack>
          <Alert color="yellow" title="Copy it now">
            You will not see this secret again: Paddock keeps only its hash. If you lose it, rotate the key.
          </Alert>
          <Textarea
            label="Secret"
            value={revealed.secret}
            readOnly
            autosize
            onFocus={(event) => event.currentTarget.select()}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)", wordBreak: "break-all" } }}
          />
          <Group justify="flex-end">
            <CopyButton value={revealed.secret}>
              {({ copied, copy }) => (
                <Button variant="light" color={copied ? "green" : undefined} onClick={copy}>
                  {copied ? "Copied" : "Copy secret"}
                </Button>
              )}
            </CopyButton>
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
