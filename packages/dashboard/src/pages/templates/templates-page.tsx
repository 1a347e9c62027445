import { Anchor, Button, Card, Modal, Table, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { formatBytes } from "@paddock/common/format";
import { IconPlus } from "@tabler/icons-react";
import { Link } from "react-router";
import { type AccountTemplate, useAccountTemplate, useAccountTemplates } from "../../api/templates";
import { BuildStatusBadge } from "../../components/build-status-badge";
import { ErrorAlert, Page } from "../../components/page";
import { formatDateTime } from "../../format";
import { NewBuildForm } from "./new-build-form";

/** The account's own templates: each with its latest build's status and the size of its image. */
export function TemplatesPage() {
  const templates = useAccountTemplates();
  const [creating, { open, close }] = useDisclosure(false);
  return (
    <Page
      title="Templates"
      actions={
        <Button leftSection={<IconPlus size={18} />} onClick={open}>
          New build
        </Button>
      }
    >
      <Modal opened={creating} onClose={close} title="New build" size="lg">
        <NewBuildForm />
      </Modal>
      <ErrorAlert error={templates.error} title="Could not list templates" />
      <Card withBorder padding={0}>
        <Table.ScrollContainer minWidth={720}>
          <Table highlightOnHover verticalSpacing="sm" aria-label="Templates">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Template</Table.Th>
                <Table.Th>Latest build</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th>Updated</Table.Th>
                <Table.Th>Description</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {templates.data?.map((template) => (
                <TemplateRow key={template.id} template={template} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {templates.data?.length === 0 && (
          <Text p="lg" c="dimmed" ta="center">
            No templates of your own yet. Build one from a Dockerfile to start sandboxes from it.
          </Text>
        )}
      </Card>
    </Page>
  );
}

function TemplateRow({ template }: { template: AccountTemplate }) {
  const detail = useAccountTemplate(template.name);
  const latest = detail.data?.builds[0];
  const current = detail.data?.builds.find((build) => build.id === template.currentBuildId);
  return (
    <Table.Tr data-template={template.name}>
      <Table.Td>
        <Anchor
          component={Link}
          to={`/templates/${encodeURIComponent(template.name)}`}
          ff="monospace"
          size="sm"
        >
          {template.name}
        </Anchor>
      </Table.Td>
      <Table.Td>{latest ? <BuildStatusBadge status={latest.status} /> : "—"}</Table.Td>
      <Table.Td>{current?.imageBytes ? formatBytes(current.imageBytes) : "—"}</Table.Td>
      <Table.Td>{formatDateTime(detail.data?.updatedAt ?? template.updatedAt)}</Table.Td>
      <Table.Td>
        <Text size="sm" lineClamp={1}>
          {template.description || "—"}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}
