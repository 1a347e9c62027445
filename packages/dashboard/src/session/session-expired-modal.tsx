import { Anchor, Modal, Stack, Text } from "@mantine/core";
import type { Account } from "../api/types";
import { LoginForm } from "./login-form";

/**
 * Over the page the session lapsed on: log in again and carry on where you were. The session's
 * provider renders it and hands it what it needs, so the two modules do not import each other.
 */
export function SessionExpiredModal({
  opened,
  email,
  loggedIn,
  logout,
}: {
  opened: boolean;
  email: string;
  loggedIn(account: Account): void;
  logout(): Promise<void>;
}) {
  return (
    <Modal
      opened={opened}
      onClose={() => undefined}
      withCloseButton={false}
      closeOnClickOutside={false}
      closeOnEscape={false}
      title="Your session has expired"
      centered
      // Above any dialog the page had open (Mantine's default is 200 for every modal, and this one
      // is mounted first, so it would sit behind them), below notifications (400).
      zIndex={300}
    >
      <Stack>
        <Text size="sm">
          Log in again to carry on. This page keeps what you were doing; nothing you typed is lost.
        </Text>
        <LoginForm email={email} emailReadOnly onLoggedIn={loggedIn} />
        <Anchor component="button" type="button" size="sm" onClick={() => void logout()}>
          Log in as someone else
        </Anchor>
      </Stack>
    </Modal>
  );
}
