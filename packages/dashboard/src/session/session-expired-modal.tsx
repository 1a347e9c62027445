import { Anchor, Modal, Stack, Text } from "@mantine/core";
import { LoginForm } from "./login-form";
import { useSession } from "./session";

/** Over the page the session lapsed on: log in again and carry on where you were. */
export function SessionExpiredModal({ opened, email }: { opened: boolean; email: string }) {
  const { loggedIn, logout } = useSession();
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
