import { ActionIcon, Button, Group, Menu, NumberInput, Stack, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import {
  IconClockPlus,
  IconDeviceFloppy,
  IconDots,
  IconPlayerPause,
  IconPlayerPlay,
  IconTrash,
} from "@tabler/icons-react";
import { useState } from "react";
import { messageOf } from "../api/client";
import { useSandboxActions } from "../api/sandboxes";
import type { Sandbox } from "../api/types";
import { canPauseToDisk } from "../sleep";

const finished = new Set(["Terminated"]);

interface Action {
  label: string;
  icon: typeof IconTrash;
  run: () => void;
  color?: string;
}

/**
 * Pause (in memory), pause to disk, resume, renew and kill, offered as the sandbox's state allows;
 * as buttons or a menu.
 */
export function SandboxActions({ sandbox, menu = false }: { sandbox: Sandbox; menu?: boolean }) {
  const actions = useSandboxActions();
  const failed = (what: string) => (error: unknown) =>
    notifications.show({ color: "red", title: `Could not ${what} ${sandbox.id}`, message: messageOf(error) });

  const offered: Array<Action | false> = [
    sandbox.state === "Running" && {
      label: "Pause",
      icon: IconPlayerPause,
      run: () => actions.pause.mutate({ id: sandbox.id, to: "memory" }, { onError: failed("pause") }),
    },
    canPauseToDisk(sandbox) && {
      label: "Pause to disk",
      icon: IconDeviceFloppy,
      run: () =>
        modals.openConfirmModal({
          title: `Pause ${sandbox.id} to disk?`,
          children: (
            <Text size="sm">
              It leaves the host's memory; its files stay. Where its memory cannot be kept, its processes
              start anew when it resumes.
            </Text>
          ),
          labels: { confirm: "Pause to disk", cancel: "Cancel" },
          onConfirm: () => actions.pause.mutate({ id: sandbox.id, to: "disk" }, { onError: failed("pause") }),
        }),
    },
    sandbox.state === "Paused" && {
      label: "Resume",
      icon: IconPlayerPlay,
      run: () => actions.resume.mutate(sandbox.id, { onError: failed("resume") }),
    },
    (sandbox.state === "Running" || sandbox.state === "Paused") && {
      label: "Renew",
      icon: IconClockPlus,
      run: () =>
        modals.open({
          title: `Renew ${sandbox.id}`,
          children: (
            <RenewForm
              onRenew={(timeout) => {
                modals.closeAll();
                actions.renew.mutate(
                  { id: sandbox.id, timeout },
                  {
                    onError: failed("renew"),
                    onSuccess: () => notifications.show({ message: `${sandbox.id} renewed` }),
                  },
                );
              }}
            />
          ),
        }),
    },
    !finished.has(sandbox.state) && {
      label: "Kill",
      icon: IconTrash,
      color: "red",
      run: () =>
        modals.openConfirmModal({
          title: `Kill ${sandbox.id}?`,
          children: (
            <Text size="sm">Its processes stop and its files are deleted. This cannot be undone.</Text>
          ),
          labels: { confirm: "Kill", cancel: "Cancel" },
          confirmProps: { color: "red" },
          onConfirm: () => actions.kill.mutate(sandbox.id, { onError: failed("kill") }),
        }),
    },
  ];
  const available = offered.filter((action): action is Action => action !== false);

  if (available.length === 0) return null;
  if (menu) {
    return (
      <Menu position="bottom-end" withinPortal>
        <Menu.Target>
          <ActionIcon variant="subtle" color="gray" aria-label={`Actions for ${sandbox.id}`}>
            <IconDots size={18} />
          </ActionIcon>
        </Menu.Target>
        <Menu.Dropdown>
          {available.map(({ label, icon: Icon, run, color }) => (
            <Menu.Item key={label} leftSection={<Icon size={16} />} onClick={run} color={color}>
              {label}
            </Menu.Item>
          ))}
        </Menu.Dropdown>
      </Menu>
    );
  }
  return (
    <Group gap="xs">
      {available.map(({ label, icon: Icon, run, color }) => (
        <Button
          key={label}
          variant="light"
          color={color}
          leftSection={<Icon size={16} />}
          onClick={run}
          size="sm"
        >
          {label}
        </Button>
      ))}
    </Group>
  );
}

function RenewForm({ onRenew }: { onRenew: (timeout: number) => void }) {
  const [seconds, setSeconds] = useState<number | string>(3600);
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (typeof seconds === "number" && seconds >= 1) onRenew(seconds);
      }}
    >
      <Stack>
        <NumberInput
          label="New lifetime, in seconds from now"
          min={1}
          step={600}
          value={seconds}
          onChange={setSeconds}
          data-autofocus
        />
        <Button type="submit">Renew</Button>
      </Stack>
    </form>
  );
}
