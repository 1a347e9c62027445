import {
  ActionIcon,
  AppShell,
  Burger,
  Group,
  Menu,
  NavLink,
  Text,
  useComputedColorScheme,
  useMantineColorScheme,
} from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import {
  IconBox,
  IconBrain,
  IconChartBar,
  IconCreditCard,
  IconKey,
  IconListDetails,
  IconLock,
  IconMoon,
  IconStack2,
  IconSun,
  IconUserCircle,
} from "@tabler/icons-react";
import { useEffect } from "react";
import { Outlet, NavLink as RouterLink, useLocation } from "react-router";
import { useSandboxEvents } from "../api/sandbox-events";
import { useAccount, useSession } from "../session/session";

const sections = [
  { to: "/sandboxes", label: "Sandboxes", icon: IconBox },
  { to: "/templates", label: "Templates", icon: IconStack2 },
  { to: "/keys", label: "API keys", icon: IconKey },
  { to: "/usage", label: "Usage", icon: IconChartBar },
  { to: "/billing", label: "Billing", icon: IconCreditCard },
  { to: "/secrets", label: "Secrets", icon: IconLock },
  { to: "/memory", label: "Memory", icon: IconBrain },
  { to: "/audit", label: "Audit log", icon: IconListDetails },
];

/** The frame of every logged-in page: header, navigation (a drawer on phones), content. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const account = useAccount();
  const { logout } = useSession();
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme("light");
  const { pathname } = useLocation();
  // The phone's drawer closes on every change of page, by a link or by the browser's Back.
  // biome-ignore lint/correctness/useExhaustiveDependencies: pathname is the trigger, not an input
  useEffect(close, [pathname]);
  useSandboxEvents();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <img src="/favicon.svg" alt="" width={26} height={26} />
            <Text fw={700} size="lg">
              Paddock
            </Text>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <ActionIcon
              variant="subtle"
              color="gray"
              size="lg"
              aria-label={scheme === "dark" ? "Light theme" : "Dark theme"}
              onClick={() => setColorScheme(scheme === "dark" ? "light" : "dark")}
            >
              {scheme === "dark" ? <IconSun size={20} /> : <IconMoon size={20} />}
            </ActionIcon>
            <Menu position="bottom-end">
              <Menu.Target>
                <ActionIcon variant="subtle" color="gray" size="lg" aria-label="Account">
                  <IconUserCircle size={22} />
                </ActionIcon>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>{account.email}</Menu.Label>
                <Menu.Label>Plan: {account.plan}</Menu.Label>
                <Menu.Divider />
                <Menu.Item onClick={() => void logout()}>Log out</Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections">
        {sections.map(({ to, label, icon: Icon }) => (
          <NavLink
            key={to}
            component={RouterLink}
            to={to}
            label={label}
            active={pathname.startsWith(to)}
            leftSection={<Icon size={18} aria-hidden />}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
