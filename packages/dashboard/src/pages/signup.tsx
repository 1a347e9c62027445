import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { IconAlertCircle } from "@tabler/icons-react";
import { useState } from "react";
import { Link, Navigate, useNavigate } from "react-router";
import { api, messageOf, ok } from "../api/client";
import { useSession } from "../session/session";
import { AuthCard } from "./login";

/** A new account (Free plan: 100 sandbox minutes a month, no card), logged in at once. */
export function SignupPage() {
  const { account, loggedIn } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<string>();
  const form = useForm({
    initialValues: { email: "", password: "" },
    validate: {
      email: (value) => (/^\S+@\S+$/.test(value) ? null : "Enter an email address"),
      password: (value) => (value.length >= 8 ? null : "Use at least 8 characters"),
    },
  });
  if (account) return <Navigate to="/sandboxes" replace />;
  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    try {
      await ok(api.POST("/auth/signup", { body: values }));
      const session = await ok(api.POST("/auth/login", { body: values }));
      loggedIn(session.account);
      navigate("/sandboxes", { replace: true });
    } catch (failure) {
      setError(messageOf(failure));
    }
  });
  return (
    <AuthCard title="Create your Paddock account">
      <Text size="sm" c="dimmed">
        The Free plan includes 100 sandbox minutes a month. No card needed.
      </Text>
      <form onSubmit={submit} noValidate>
        <Stack>
          {error && (
            <Alert color="red" icon={<IconAlertCircle />} title="Could not sign up" role="alert">
              {error}
            </Alert>
          )}
          <TextInput
            label="Email"
            type="email"
            autoComplete="email"
            required
            {...form.getInputProps("email")}
          />
          <PasswordInput
            label="Password"
            description="At least 8 characters"
            autoComplete="new-password"
            required
            {...form.getInputProps("password")}
          />
          <Button type="submit" loading={form.submitting}>
            Sign up
          </Button>
        </Stack>
      </form>
      <Text size="sm">
        Have an account?{" "}
        <Anchor component={Link} to="/login">
          Log in
        </Anchor>
      </Text>
    </AuthCard>
  );
}
