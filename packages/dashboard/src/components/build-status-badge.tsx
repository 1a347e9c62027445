import { Badge } from "@mantine/core";
import type { BuildStatus } from "../api/templates";

const colors: Record<BuildStatus, string> = {
  waiting: "yellow",
  building: "blue",
  ready: "green",
  error: "red",
  cancelled: "gray",
};

/** A build's status as a coloured badge; the word is always there, so colour is never the only cue. */
export function BuildStatusBadge({ status }: { status: BuildStatus }) {
  return (
    <Badge color={colors[status]} variant="dot" miw="max-content" data-testid="build-status">
      {status}
    </Badge>
  );
}
