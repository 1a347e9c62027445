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

/**
 * A sandbox state as a coloured badge; the word is always there, so colour is never the only cue.
 * `label` says more than the state's word (where a paused sandbox sleeps).
 */
export function StateBadge({ state, label = state }: { state: string; label?: string }) {
  return (
    // At least as wide as its word: in a narrow table column it would otherwise be cut to "RUNNI…".
    // A label longer than its state's word keeps its own case: in capitals it is twice as wide.
    <Badge
      color={colors[state] ?? "gray"}
      variant="dot"
      miw="max-content"
      tt={label === state ? undefined : "none"}
      data-testid="sandbox-state"
    >
      {label}
    </Badge>
  );
}
