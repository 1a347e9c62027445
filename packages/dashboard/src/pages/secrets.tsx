import {
  ActionIcon,
  Button,
  Paper,
  PasswordInput,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { IconTrash } from "@tabler/icons-react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, ok } from "../api/client";
import { secretsKey, useSecrets } from "../api/secrets";
import { ErrorAlert, Page } from "../components/page";
import { formatDateTime } from "../format";

const namePattern = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const nameRule = "Letters, digits and underscores, not starting with a digit; at most 128 characters.";

/** The account's secrets, by name only: values go in and never come back out. */
export function SecretsPage() {
  const queryClient = useQueryClient();
  const secrets = useSecrets();
  const names = new Set(secrets.data?.map((secret) => secret.name));
  const form = useForm({
    initialValues: { name: "", value: "" },
    validate: {
      name: (value) => (namePattern.test(value) ? null : nameRule),
      value: (value) => (value.length > 0 ? null : "Enter the value"),
    },
  });

  const save = useMutation({
    mutationFn: (values: typeof form.values) => ok(api.POST("/secrets", { body: values })),
    onSuccess: (secret, values) => {
      void queryClient.invalidateQueries({ queryKey: secretsKey });
      form.reset();
      const verb = names.has(values.name) ? "replaced" : "saved";
      notifications.show({ color: "green", message: `Secret ${secret.name} ${verb}.` });
    },
  });
  const remove = useMutation({
    mutationFn: (name: string) => ok(api.DELETE("/secrets/{name}", { params: { path: { name } } })),
    onSuccess: (_, name) => {
      void queryClient.invalidateQueries({ queryKey: secretsKey });
      notifications.show({ color: "green", message: `Secret ${name} deleted.` });
    },
  });
  const confirmDelete = (name: string) =>
    modals.openConfirmModal({
      title: `Delete ${name}?`,
      children: (
        <Text size="sm">
          New sandboxes cannot be given it; running ones keep the value they have. It cannot be recovered.
        </Text>
      ),
      labels: { confirm: "Delete", cancel: "Cancel" },
      confirmProps: { color: "red" },
      onConfirm: () => remove.mutate(name),
    });

  const items = secrets.data ?? [];
  const replacing = names.has(form.values.name);
  return (
    <Page title="Secrets">
      <Text size="sm" c="dimmed">
        Values are stored encrypted and never shown again, here or anywhere. A sandbox receives them as
        environment variables when it is created with them.
      </Text>
      <Paper withBorder p="md" maw={560}>
        <form onSubmit={form.onSubmit((values) => save.mutate(values))} noValidate>
          <Stack>
            <Title order={2} size="h4">
              Add a secret
            </Title>
            <ErrorAlert error={save.error} title="Could not save the secret" />
            <TextInput
              label="Name"
              description={
                replacing
                  ? `${form.values.name} exists: saving replaces its value.`
                  : "Like an environment variable"
              }
              autoComplete="off"
              required
              {...form.getInputProps("name")}
            />
            <PasswordInput label="Value" autoComplete="off" required {...form.getInputProps("value")} />
            <Button type="submit" loading={save.isPending} color={replacing ? "orange" : undefined}>
              {replacing ? "Replace secret" : "Save secret"}
            </Button>
          </Stack>
        </form>
      </Paper>
      <ErrorAlert error={secrets.error} title="Could not load the secrets" />
      <ErrorAlert error={remove.error} title="Could not delete the secret" />
      {secrets.isSuccess && items.length === 0 && <Text c="dimmed">No secrets yet.</Text>}
      {items.length > 0 && (
        <Table.ScrollContainer minWidth={520}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Updated</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((secret) => (
                <Table.Tr key={secret.name}>
                  <Table.Td ff="monospace">{secret.name}</Table.Td>
                  <Table.Td>{formatDateTime(secret.createdAt)}</Table.Td>
                  <Table.Td>{formatDateTime(secret.updatedAt)}</Table.Td>
                  <Table.Td ta="right">
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Delete ${secret.name}`}
                      onClick={() => confirmDelete(secret.name)}
                    >
                      <IconTrash size={18} />
                    </ActionIcon>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Page>
  );
}
