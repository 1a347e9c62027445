import { Alert, Button, Card, Code, Group, ScrollArea, Stack, Text, Title } from "@mantine/core";
import { formatBytes } from "@paddock/common/format";
import { IconAlertCircle } from "@tabler/icons-react";
import { useEffect, useRef } from "react";
import { isActive, type TemplateBuild, useBuildLog, useTemplateActions } from "../../api/templates";
import { BuildStatusBadge } from "../../components/build-status-badge";
import { ErrorAlert } from "../../components/page";

const levelColors = {
  info: undefined,
  warn: "var(--mantine-color-yellow-7)",
  error: "var(--mantine-color-red-6)",
};

/**
 * One build: its status, a Cancel button while it runs, why it failed, and its log, live while
 * it runs and whole afterwards. The view keeps to the newest line unless scrolled up.
 */
export function BuildLogPanel({ name, build }: { name: string; build: TemplateBuild }) {
  const log = useBuildLog(name, build.id);
  const { cancel } = useTemplateActions();
  // The stream's end is newer than the template's last answer, which may still say "building".
  const shown = log.ended ?? build;
  const viewport = useRef<HTMLDivElement>(null);
  const following = useRef(true);

  // biome-ignore lint/correctness/useExhaustiveDependencies: new entries are the trigger
  useEffect(() => {
    const element = viewport.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [log.entries.length]);

  return (
    <Card withBorder component="section" aria-label={`Build ${build.id}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap">
          <Group gap="sm">
            <Title order={2} size="h4">
              Build <Code>{build.id}</Code>
            </Title>
            <BuildStatusBadge status={shown.status} />
            {shown.imageBytes ? <Text size="sm">{formatBytes(shown.imageBytes)}</Text> : null}
          </Group>
          {isActive(shown.status) && (
            <Button
              color="red"
              variant="light"
              loading={cancel.isPending}
              onClick={() => cancel.mutate({ name, buildId: build.id })}
            >
              Cancel build
            </Button>
          )}
        </Group>
        <ErrorAlert error={cancel.error} title="Could not cancel the build" />
        {shown.status === "error" && (
          <Alert color="red" icon={<IconAlertCircle />} title="The build failed" role="alert">
            {shown.reason}
          </Alert>
        )}
        {log.failure && (
          <Text size="sm" c="red" role="status">
            The log stream stopped: {log.failure}
          </Text>
        )}
        <ScrollArea.Autosize
          mah={480}
          viewportRef={viewport}
          onScrollPositionChange={({ y }) => {
            const element = viewport.current;
            if (element) following.current = y + element.clientHeight >= element.scrollHeight - 8;
          }}
        >
          <Code block role="log" aria-label="Build log" data-testid="build-log">
            {log.entries.length === 0 &&
              (isActive(shown.status) ? "Waiting for the build's first line…" : "")}
            {log.entries.map((entry) => (
              <div key={entry.seq} style={{ color: levelColors[entry.level] }}>
                {entry.message}
              </div>
            ))}
          </Code>
        </ScrollArea.Autosize>
      </Stack>
    </Card>
  );
}
