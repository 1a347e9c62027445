import {
  ActionIcon,
  Button,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Text,
  TextInput,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { IconPlus, IconX } from "@tabler/icons-react";
import { useState } from "react";
import { useNavigate } from "react-router";
import { createSandbox, useTemplates } from "../api/sandboxes";
import { useSecrets } from "../api/secrets";
import { useAccountTemplates } from "../api/templates";
import type { Template } from "../api/types";
import { useUsage } from "../api/usage";
import { ErrorAlert } from "../components/page";
import { initialSleepValues, lifecycleOf, SleepSettings } from "./sleep-settings";

interface Pair {
  key: string;
  value: string;
}

const toRecord = (pairs: Pair[]) =>
  Object.fromEntries(pairs.filter((pair) => pair.key.trim()).map((pair) => [pair.key.trim(), pair.value]));

/**
 * POST /sandboxes from a template, with a lifetime, variables, stored secrets, metadata and how it
 * sleeps and wakes.
 */
export function CreateSandboxForm() {
  const navigate = useNavigate();
  const templates = useTemplates({ fresh: true });
  const own = new Set((useAccountTemplates().data ?? []).map((template) => template.name));
  const secrets = useSecrets();
  const usage = useUsage();
  const [error, setError] = useState<unknown>();
  const form = useForm({
    initialValues: {
      template: "python",
      timeout: 3600 as number | string,
      env: [] as Pair[],
      secrets: [] as string[],
      metadata: [] as Pair[],
      sleep: initialSleepValues,
    },
  });
  const template = templates.data?.find((candidate) => candidate.id === form.values.template);

  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    try {
      const env = toRecord(values.env);
      const metadata = toRecord(values.metadata);
      const sandbox = await createSandbox({
        template: values.template,
        ...(typeof values.timeout === "number" ? { timeout: values.timeout } : {}),
        ...(Object.keys(env).length ? { env } : {}),
        ...(Object.keys(metadata).length ? { metadata } : {}),
        // Each secret reaches the sandbox as the variable of its own name.
        ...(values.secrets.length
          ? { secrets: Object.fromEntries(values.secrets.map((name) => [name, name])) }
          : {}),
        lifecycle: lifecycleOf(values.sleep),
      });
      navigate(`/sandboxes/${sandbox.id}`);
    } catch (failure) {
      setError(failure);
    }
  });

  return (
    <form onSubmit={submit}>
      <Stack>
        <ErrorAlert error={error} title="Could not create the sandbox" />
        <Select
          label="Template"
          data={templateChoices(templates.data ?? [], own)}
          description={template?.description}
          allowDeselect={false}
          searchable
          {...form.getInputProps("template")}
        />
        <NumberInput
          label="Lifetime (seconds)"
          description="Empty: the sandbox never expires (renew or kill it yourself)."
          min={1}
          step={600}
          {...form.getInputProps("timeout")}
        />
        <PairsField
          legend="Environment variables"
          add="Add variable"
          names={["Name", "Value"]}
          suggestions={template?.env.map((variable) => variable.name) ?? []}
          pairs={form.values.env}
          onChange={(pairs) => form.setFieldValue("env", pairs)}
        />
        <MultiSelect
          label="Secrets"
          description="Each reaches the sandbox as the environment variable of its name; values are never shown."
          data={(secrets.data ?? []).map((secret) => secret.name)}
          placeholder={secrets.data?.length === 0 ? "No secrets stored yet" : undefined}
          searchable
          {...form.getInputProps("secrets")}
        />
        <PairsField
          legend="Metadata"
          add="Add label"
          names={["Key", "Value"]}
          suggestions={[]}
          pairs={form.values.metadata}
          onChange={(pairs) => form.setFieldValue("metadata", pairs)}
        />
        <SleepSettings
          values={form.values.sleep}
          inputProps={(path, options) => form.getInputProps(`sleep.${path}`, options)}
          plan={usage.data?.plan.lifecycle}
        />
        <Button type="submit" loading={form.submitting}>
          Create sandbox
        </Button>
      </Stack>
    </form>
  );
}

/** The templates to choose from, the account's own in a group of their own. */
function templateChoices(templates: Template[], own: Set<string>) {
  const choices = (mine: boolean) =>
    templates.filter(({ id }) => own.has(id) === mine).map(({ id, name }) => ({ value: id, label: name }));
  return [
    { group: "Built in and published", items: choices(false) },
    { group: "Your templates", items: choices(true) },
  ].filter((group) => group.items.length > 0);
}

/** Rows of key and value, each with its own labelled inputs and a remove button. */
function PairsField(props: {
  legend: string;
  add: string;
  names: [string, string];
  suggestions: string[];
  pairs: Pair[];
  onChange: (pairs: Pair[]) => void;
}) {
  const { legend, add, names, pairs, onChange } = props;
  const set = (index: number, change: Partial<Pair>) =>
    onChange(pairs.map((pair, at) => (at === index ? { ...pair, ...change } : pair)));
  const missing = props.suggestions.filter((name) => !pairs.some((pair) => pair.key === name));
  return (
    <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
      <Text component="legend" size="sm" fw={500} mb={4}>
        {legend}
      </Text>
      <Stack gap="xs">
        {pairs.map((pair, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
          <Group key={index} gap="xs" wrap="nowrap" align="flex-end">
            <TextInput
              aria-label={`${legend}: ${names[0]} ${index + 1}`}
              placeholder={names[0]}
              value={pair.key}
              onChange={(event) => set(index, { key: event.currentTarget.value })}
              style={{ flex: 1 }}
            />
            <TextInput
              aria-label={`${legend}: ${names[1]} ${index + 1}`}
              placeholder={names[1]}
              value={pair.value}
              onChange={(event) => set(index, { value: event.currentTarget.value })}
              style={{ flex: 2 }}
            />
            <ActionIcon
              variant="subtle"
              color="gray"
              size="lg"
              aria-label={`Remove ${pair.key || `row ${index + 1}`}`}
              onClick={() => onChange(pairs.filter((_, at) => at !== index))}
            >
              <IconX size={16} />
            </ActionIcon>
          </Group>
        ))}
        <Group gap="xs">
          <Button
            variant="subtle"
            size="compact-sm"
            leftSection={<IconPlus size={14} />}
            onClick={() => onChange([...pairs, { key: "", value: "" }])}
          >
            {add}
          </Button>
          {missing.map((name) => (
            <Button
              key={name}
              variant="subtle"
              size="compact-sm"
              onClick={() => onChange([...pairs, { key: name, value: "" }])}
            >
              + {name}
            </Button>
          ))}
        </Group>
      </Stack>
    </fieldset>
  );
}
