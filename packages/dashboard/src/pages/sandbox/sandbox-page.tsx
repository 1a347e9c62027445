import {
  Alert,
  Anchor,
  Badge,
  Card,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Tabs,
  Text,
  Title,
} from "@mantine/core";
import { IconArrowLeft } from "@tabler/icons-react";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { ApiError } from "../../api/client";
import { useSandbox, useTemplates } from "../../api/sandboxes";
import { ErrorAlert } from "../../components/page";
import { SandboxActions } from "../../components/sandbox-actions";
import { StateBadge } from "../../components/state-badge";
import { formatDateTime, formatRelative } from "../../format";
import { lifecycleLines, stateLabel } from "../../sleep";
import { Diagnostics } from "./diagnostics";
import { Endpoints } from "./endpoints";
import { Files } from "./files";
import { Metrics } from "./metrics";
import { Terminal } from "./terminal";

/** One sandbox: its record, live, and tabs for a terminal, its files, metrics, endpoints and diagnostics. */
export function SandboxPage() {
  const { id = "" } = useParams();
  const query = useSandbox(id);
  const templates = useTemplates();
  const [tab, setTab] = useState<string | null>("terminal");
  // A record that answers 404 after it was shown has been deleted meanwhile: keep showing it.
  const deleted = query.error instanceof ApiError && query.error.status === 404;
  const sandbox = query.data && (deleted ? { ...query.data, state: "Terminated" } : query.data);

  const back = (
    <Anchor component={Link} to="/sandboxes" size="sm">
      <Group gap={4}>
        <IconArrowLeft size={14} aria-hidden /> Sandboxes
      </Group>
    </Anchor>
  );
  if (query.isPending) return <Loader aria-label="Loading" />;
  if (!sandbox)
    return (
      <Stack>
        {back}
        <ErrorAlert error={query.error} title={`Sandbox ${id}`} />
      </Stack>
    );

  const running = sandbox.state === "Running";
  const gone = sandbox.state === "Terminated" || sandbox.state === "Failed";
  const template = templates.data?.find((candidate) => candidate.id === sandbox.template);

  return (
    <Stack>
      {back}
      <Group justify="space-between" wrap="wrap">
        <Group gap="sm">
          <Title order={1} size="h3" ff="monospace">
            {sandbox.id}
          </Title>
          <StateBadge state={sandbox.state} label={stateLabel(sandbox)} />
        </Group>
        <SandboxActions sandbox={sandbox} />
      </Group>
      {gone && (
        <Alert
          color={sandbox.state === "Failed" ? "red" : "gray"}
          role="alert"
          title={`This sandbox is ${sandbox.state}`}
        >
          {sandbox.state === "Failed"
            ? `It failed${sandbox.reason ? ` (${sandbox.reason})` : ""}. Its diagnostics below say why.`
            : "It was killed or it expired: its processes and files are gone. What this page showed stays here."}
        </Alert>
      )}
      {!running && !gone && (
        <Alert color="yellow" title={`This sandbox is ${sandbox.state}`}>
          The terminal, files and metrics need it Running
          {sandbox.state === "Paused" ? ": resume it to carry on." : "; this page updates by itself."}
          {sandbox.state === "Paused" &&
            sandbox.pausedTo === "disk" &&
            !sandbox.memoryPreserved &&
            " It sleeps on disk: its files are kept, and its processes start anew when it resumes."}
        </Alert>
      )}
      <Card withBorder>
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
          <Detail label="Template">{sandbox.template ?? "—"}</Detail>
          <Detail label="Created">{formatDateTime(sandbox.createdAt)}</Detail>
          <Detail label="Expires">
            {sandbox.expiresAt
              ? `${formatDateTime(sandbox.expiresAt)} (${formatRelative(sandbox.expiresAt)})`
              : "never"}
          </Detail>
          <Detail label="Last activity">
            {sandbox.lastActivityAt
              ? `${formatDateTime(sandbox.lastActivityAt)} (${formatRelative(sandbox.lastActivityAt)})`
              : "—"}
          </Detail>
          <Detail label="Idles out">
            {!running
              ? "—"
              : sandbox.idleAt
                ? `${formatDateTime(sandbox.idleAt)} (${formatRelative(sandbox.idleAt)})`
                : "never"}
          </Detail>
          <Detail label="Sleep and wake">
            <div data-testid="sandbox-lifecycle">
              {lifecycleLines(sandbox.lifecycle).map((line) => (
                <div key={line}>{line}</div>
              ))}
            </div>
          </Detail>
          <Detail label="Metadata">
            {Object.keys(sandbox.metadata).length === 0
              ? "—"
              : Object.entries(sandbox.metadata).map(([key, value]) => (
                  <Badge key={key} variant="outline" mr={4} tt="none">
                    {key}={value}
                  </Badge>
                ))}
          </Detail>
        </SimpleGrid>
      </Card>
      <Tabs value={tab} onChange={setTab} keepMounted>
        <Tabs.List>
          <Tabs.Tab value="terminal">Terminal</Tabs.Tab>
          <Tabs.Tab value="files">Files</Tabs.Tab>
          <Tabs.Tab value="metrics">Metrics</Tabs.Tab>
          <Tabs.Tab value="endpoints">Endpoints</Tabs.Tab>
          <Tabs.Tab value="diagnostics">Diagnostics</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="terminal" pt="md">
          <Terminal sandboxId={sandbox.id} running={running} />
        </Tabs.Panel>
        <Tabs.Panel value="files" pt="md">
          <Files sandboxId={sandbox.id} running={running} />
        </Tabs.Panel>
        <Tabs.Panel value="metrics" pt="md">
          <Metrics sandboxId={sandbox.id} running={running} visible={tab === "metrics"} />
        </Tabs.Panel>
        <Tabs.Panel value="endpoints" pt="md">
          <Endpoints sandboxId={sandbox.id} template={template} />
        </Tabs.Panel>
        <Tabs.Panel value="diagnostics" pt="md">
          <Diagnostics sandboxId={sandbox.id} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function Detail({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}
