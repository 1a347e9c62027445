import { Anchor, Center, Paper, Stack, Text, Title } from "@mantine/core";
import { Link, Navigate, useLocation, useNavigate } from "react-router";
import { LoginForm } from "../session/login-form";
import { useSession } from "../session/session";

/** Where a log-in returns to: the page that asked for it, else the sandboxes. */
export function useReturnPath(): string {
  const state = useLocation().state as { from?: { pathname: string; search: string } } | null;
  return state?.from ? `${state.from.pathname}${state.from.search}` : "/sandboxes";
}

export function AuthCard({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" radius="md" w="100%" maw={420} component="main">
        <Stack>
          <Title order={1} size="h2">
            {title}
          </Title>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}

export function LoginPage() {
  const { account, loggedIn } = useSession();
  const navigate = useNavigate();
  const returnPath = useReturnPath();
  if (account) return <Navigate to={returnPath} replace />;
  return (
    <AuthCard title="Log in to Paddock">
      <LoginForm
        onLoggedIn={(next) => {
          loggedIn(next);
          navigate(returnPath, { replace: true });
        }}
      />
      <Text size="sm">
        New here?{" "}
        <Anchor component={Link} to="/signup">
          Create an account
        </Anchor>
      </Text>
    </AuthCard>
  );
}
