import { Badge } from "@mantine/core";

const colors: Record<string, string> = {
  Pending: "yellow",
  Running: "green",
  Pausing: "orange",
  Paused: "gray",
  Resuming: "yellow",
  Stopping: "orange",
  Terminated: "dark",
  Failed: "red",
};

/** A sandbox state as a coloured badge; the word is always there, so colour is never the only cue. */
export function StateBadge({ state }: { state: string }) {
  return (
    // At least as wide as its word: in a narrow table column it would otherwise be cut to "RUNNI…".
    <Badge color={colors[state] ?? "gray"} variant="dot" miw="max-content" data-testid="sandbox-state">
      {state}
    </Badge>
  );
}
