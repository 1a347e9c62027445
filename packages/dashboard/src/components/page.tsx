import { Alert, Group, Stack, Title } from "@mantine/core";
import { IconAlertCircle } from "@tabler/icons-react";
import type { ReactNode } from "react";
import { messageOf } from "../api/client";

/** A page's title, its actions on the right, and its content below. */
export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={1} size="h2">
          {title}
        </Title>
        {actions}
      </Group>
      {children}
    </Stack>
  );
}

/** What went wrong, in the server's words (its `detail`), where the user is looking. */
export function ErrorAlert({ error, title = "Something went wrong" }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" icon={<IconAlertCircle />} title={title} role="alert">
      {messageOf(error)}
    </Alert>
  );
}
