import { Alert, Button, PasswordInput, Stack, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { IconAlertCircle } from "@tabler/icons-react";
import { useState } from "react";
import { ApiError, api, messageOf, ok } from "../api/client";
import type { Account } from "../api/types";

/** Email and password, logged in through POST /auth/login (which sets the session cookie). */
export function LoginForm({
  email = "",
  emailReadOnly = false,
  onLoggedIn,
}: {
  email?: string;
  emailReadOnly?: boolean;
  onLoggedIn: (account: Account) => void;
}) {
  const [error, setError] = useState<string>();
  const form = useForm({ initialValues: { email, password: "" } });
  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    try {
      const session = await ok(api.POST("/auth/login", { body: values }));
      onLoggedIn(session.account);
    } catch (failure) {
      // The password is cleared; the email stays, so a typo costs one field.
      form.setFieldValue("password", "");
      setError(
        failure instanceof ApiError && failure.status === 401
          ? "Wrong email or password. Check both and try again."
          : messageOf(failure),
      );
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {error && (
          <Alert color="red" icon={<IconAlertCircle />} title="Could not log in" role="alert">
            {error}
          </Alert>
        )}
        <TextInput
          label="Email"
          type="email"
          autoComplete="username"
          required
          readOnly={emailReadOnly}
          {...form.getInputProps("email")}
        />
        <PasswordInput
          label="Password"
          autoComplete="current-password"
          required
          data-autofocus={emailReadOnly || undefined}
          {...form.getInputProps("password")}
        />
        <Button type="submit" loading={form.submitting}>
          Log in
        </Button>
      </Stack>
    </form>
  );
}
