import { Accordion, Radio, Select, Stack, Switch, Text } from "@mantine/core";
import type { PlanIdlePolicy, SandboxLifecycle } from "../api/types";
import { formatDuration } from "../format";

/** The create form's sleep settings; `idle` is "plan" (left to the plan), "never" or seconds. */
export interface SleepValues {
  onTimeout: SandboxLifecycle["onTimeout"];
  idle: string;
  autoResume: boolean;
  keepMemory: boolean;
  processesKeepAwake: boolean;
}

export const initialSleepValues: SleepValues = {
  onTimeout: "kill",
  idle: "plan",
  autoResume: true,
  keepMemory: true,
  processesKeepAwake: true,
};

/**
 * The create's `lifecycle`. An idle timeout left to the plan is left out, so the server applies
 * the plan's default as it stands when the sandbox is created; maxPaused is always the plan's.
 */
export function lifecycleOf(values: SleepValues): Partial<SandboxLifecycle> {
  return {
    onTimeout: values.onTimeout,
    ...(values.idle === "plan" ? {} : { idleTimeout: values.idle === "never" ? null : Number(values.idle) }),
    autoResume: values.autoResume,
    keepMemory: values.keepMemory,
    processesKeepAwake: values.processesKeepAwake,
  };
}

const idlePresets = [300, 900, 1800, 3600, 6 * 3600, 86_400];

/** The idle timeouts offered: the plan's default first (preselected), common lengths, and never. */
function idleOptions(plan: PlanIdlePolicy | undefined) {
  const planDefault = plan?.idleTimeout;
  const options = [
    {
      value: "plan",
      label:
        planDefault === undefined
          ? "The plan's default"
          : `${planDefault === null ? "Never" : formatDuration(planDefault)} (plan default)`,
    },
  ];
  for (const seconds of idlePresets) {
    if (seconds !== planDefault) options.push({ value: String(seconds), label: formatDuration(seconds) });
  }
  if (planDefault !== null) options.push({ value: "never", label: "Never" });
  return options;
}

type InputProps = (path: keyof SleepValues, options?: { type: "checkbox" }) => object;

/** "Sleep and wake", folded away under its summary: what happens at the timeout and when idle. */
export function SleepSettings(props: {
  values: SleepValues;
  inputProps: InputProps;
  plan: PlanIdlePolicy | undefined;
}) {
  const { values, inputProps, plan } = props;
  const options = idleOptions(plan);
  const idleLabel = options.find((option) => option.value === values.idle)?.label ?? "";
  return (
    <Accordion variant="contained" chevronPosition="left">
      <Accordion.Item value="sleep">
        <Accordion.Control>
          <Text size="sm" fw={500}>
            Sleep and wake
          </Text>
          <Text size="xs" c="dimmed">
            Pauses when idle: {idleLabel.toLowerCase()};{" "}
            {values.autoResume ? "resumes on use" : "resumes when asked"}
          </Text>
        </Accordion.Control>
        <Accordion.Panel>
          <Stack gap="sm">
            <Select
              label="Pause when idle for"
              description="Nothing reached it through Paddock for this long: no command, file call, terminal or request."
              data={options}
              allowDeselect={false}
              {...inputProps("idle")}
            />
            <Radio.Group
              label="When its lifetime ends"
              description="A paused sandbox gets its lifetime again when it resumes."
              {...inputProps("onTimeout")}
            >
              <Stack gap={6} mt={6}>
                <Radio value="kill" label="Kill it" />
                <Radio value="pause" label="Pause it" />
              </Stack>
            </Radio.Group>
            <Switch
              label="Resume on use"
              description="A command, file call or terminal on the paused sandbox resumes it first."
              {...inputProps("autoResume", { type: "checkbox" })}
            />
            <Switch
              label="Running processes count as use"
              description="A command or terminal that still runs keeps it awake."
              {...inputProps("processesKeepAwake", { type: "checkbox" })}
            />
            <Switch
              label="Keep memory on pause to disk"
              description="Where the runtime can, its processes come back as they were; otherwise they start anew (files always stay)."
              {...inputProps("keepMemory", { type: "checkbox" })}
            />
            {plan && (
              <Text size="xs" c="dimmed">
                {plan.maxPaused === null
                  ? "Your plan keeps paused sandboxes however long they stay paused."
                  : `Your plan deletes a sandbox paused for ${formatDuration(plan.maxPaused)}.`}
              </Text>
            )}
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  );
}
