import { Alert, Button, Code, Group, ScrollArea, SegmentedControl, Stack } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, ok } from "../../api/client";
import { ErrorAlert } from "../../components/page";

type Kind = "logs" | "events";

/** The sandbox's diagnostics: its container output (logs) and its lifecycle events. */
export function Diagnostics({ sandboxId }: { sandboxId: string }) {
  const [kind, setKind] = useState<Kind>("events");
  const diagnostics = useQuery({
    queryKey: ["diagnostics", sandboxId, kind],
    queryFn: () =>
      ok(
        kind === "logs"
          ? api.GET("/sandboxes/{id}/diagnostics/logs", { params: { path: { id: sandboxId } } })
          : api.GET("/sandboxes/{id}/diagnostics/events", { params: { path: { id: sandboxId } } }),
      ),
  });
  return (
    <Stack>
      <Group justify="space-between">
        <SegmentedControl
          aria-label="Diagnostics"
          value={kind}
          onChange={(value) => setKind(value as Kind)}
          data={[
            { value: "events", label: "Events" },
            { value: "logs", label: "Logs" },
          ]}
        />
        <Button
          variant="light"
          size="compact-sm"
          onClick={() => void diagnostics.refetch()}
          loading={diagnostics.isFetching}
        >
          Refresh
        </Button>
      </Group>
      <ErrorAlert error={diagnostics.error} title={`Could not read the ${kind}`} />
      {diagnostics.data?.truncated && (
        <Alert color="yellow">Only the latest part is shown; the full text is longer.</Alert>
      )}
      {diagnostics.data && (
        <ScrollArea.Autosize mah={480} type="auto">
          <Code block data-testid={`diagnostics-${kind}`}>
            {diagnostics.data.text || `No ${kind} yet.`}
          </Code>
        </ScrollArea.Autosize>
      )}
    </Stack>
  );
}
