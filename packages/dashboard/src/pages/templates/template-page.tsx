import { Anchor, Button, Card, Group, Loader, Modal, Table, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { formatBytes } from "@paddock/common/format";
import { IconPlus, IconTrash } from "@tabler/icons-react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { ApiError } from "../../api/client";
import { useAccountTemplate, useTemplateActions } from "../../api/templates";
import { BuildStatusBadge } from "../../components/build-status-badge";
import { ErrorAlert, Page } from "../../components/page";
import { formatDateTime } from "../../format";
import { BuildLogPanel } from "./build-log";
import { NewBuildForm } from "./new-build-form";

/** One template of the account: its builds, the log of one (`?build=`, else the latest), delete. */
export function TemplatePage() {
  const name = useParams().name as string;
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const template = useAccountTemplate(name);
  const { remove } = useTemplateActions();
  const [building, { open, close }] = useDisclosure(false);
  const builds = template.data?.builds ?? [];
  // A build just started is named in the URL before the template's builds list it: wait for it.
  const wanted = search.get("build");
  const selected = wanted ? builds.find((build) => build.id === wanted) : builds[0];

  const confirmDelete = () =>
    modals.openConfirmModal({
      title: `Delete ${name}?`,
      children: (
        <Text size="sm">
          Its builds, their logs and images are deleted; sandboxes can no longer start from it.
        </Text>
      ),
      labels: { confirm: "Delete", cancel: "Cancel" },
      confirmProps: { color: "red" },
      onConfirm: () =>
        remove.mutate(name, {
          onSuccess: () => {
            notifications.show({ message: `Template ${name} deleted.` });
            navigate("/templates");
          },
        }),
    });
  const inUse = remove.error instanceof ApiError && remove.error.code === "template_in_use";

  return (
    <Page
      title={name}
      actions={
        <Group gap="xs">
          <Button leftSection={<IconPlus size={18} />} onClick={open}>
            New build
          </Button>
          <Button
            color="red"
            variant="light"
            leftSection={<IconTrash size={18} />}
            loading={remove.isPending}
            onClick={confirmDelete}
          >
            Delete template
          </Button>
        </Group>
      }
    >
      <Modal opened={building} onClose={close} title={`New build of ${name}`} size="lg">
        <NewBuildForm name={name} onStarted={close} />
      </Modal>
      <Anchor component={Link} to="/templates" size="sm">
        ← All templates
      </Anchor>
      <ErrorAlert error={template.error} title="Could not read the template" />
      <ErrorAlert error={remove.error} title={inUse ? `${name} is in use` : `Could not delete ${name}`} />
      {template.isPending && <Loader aria-label="Loading" />}
      {template.data?.description && <Text>{template.data.description}</Text>}
      {builds.length > 0 && (
        <Card withBorder padding={0}>
          <Table.ScrollContainer minWidth={720}>
            <Table highlightOnHover verticalSpacing="xs" aria-label="Builds">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Build</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Started</Table.Th>
                  <Table.Th>Finished</Table.Th>
                  <Table.Th>Size</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {builds.map((build) => (
                  <Table.Tr
                    key={build.id}
                    data-build={build.id}
                    bg={build.id === selected?.id ? "var(--mantine-color-default-hover)" : undefined}
                  >
                    <Table.Td>
                      <Anchor
                        component={Link}
                        to={`?build=${encodeURIComponent(build.id)}`}
                        replace
                        ff="monospace"
                        size="sm"
                        aria-current={build.id === selected?.id ? "true" : undefined}
                      >
                        {build.id}
                      </Anchor>
                      {build.id === template.data?.currentBuildId && (
                        <Text span size="xs" c="dimmed" ml="xs">
                          current
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <BuildStatusBadge status={build.status} />
                    </Table.Td>
                    <Table.Td>{formatDateTime(build.startedAt)}</Table.Td>
                    <Table.Td>{formatDateTime(build.finishedAt)}</Table.Td>
                    <Table.Td>{build.imageBytes ? formatBytes(build.imageBytes) : "—"}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Card>
      )}
      {selected && <BuildLogPanel key={selected.id} name={name} build={selected} />}
      {wanted && !selected && template.data && !template.isFetching && (
        <Text c="dimmed">No build {wanted} of this template.</Text>
      )}
    </Page>
  );
}
