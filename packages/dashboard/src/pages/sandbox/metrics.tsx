import { LineChart } from "@mantine/charts";
import { Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useEffect, useState } from "react";
import type { MetricsSample } from "../../api/types";

const samplesKept = 60;
/** Room for "16384 MiB" on one line (Recharts' default width wraps it). */
const memoryAxisWidth = 84;

/**
 * Live CPU and memory from execd's metrics stream (GET /sandboxes/{id}/metrics/watch, one a
 * second). The stream runs while the page is open, so the charts have a history when shown; they
 * are drawn only while `visible` (a hidden tab has no size to draw in).
 */
export function Metrics(props: { sandboxId: string; running: boolean; visible: boolean }) {
  const { sandboxId, running, visible } = props;
  const [samples, setSamples] = useState<MetricsSample[]>([]);
  const [ended, setEnded] = useState<string>();

  useEffect(() => {
    if (!running) return;
    setEnded(undefined);
    const source = new EventSource(`/sandboxes/${encodeURIComponent(sandboxId)}/metrics/watch`);
    source.addEventListener("metrics", (event) => {
      const sample = JSON.parse(event.data) as MetricsSample;
      setSamples((previous) => [...previous.slice(-(samplesKept - 1)), sample]);
    });
    // The server's own `error` event (the sandbox went away) carries data; the browser's has none.
    source.addEventListener("error", (event) => {
      if (!(event instanceof MessageEvent)) return;
      setEnded((JSON.parse(event.data) as { detail?: string }).detail ?? "the stream ended");
      source.close();
    });
    return () => source.close();
  }, [sandboxId, running]);

  const latest = samples.at(-1);
  const points = samples.map((sample) => ({
    time: new Date(sample.timestamp).toLocaleTimeString(),
    cpu: Math.round(sample.cpu_used_pct * 10) / 10,
    memory: Math.round(sample.mem_used_mib),
  }));

  if (!running && samples.length === 0)
    return <Text c="dimmed">Metrics stream while the sandbox is Running.</Text>;
  if (!visible) return null;

  return (
    <Stack>
      {ended && (
        <Text c="dimmed" size="sm" role="status">
          The metrics stream ended: {ended}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <MetricChart
          title="CPU"
          testId="cpu-now"
          now={
            latest &&
            `${latest.cpu_used_pct.toFixed(1)} % of ${latest.cpu_count} ${latest.cpu_count > 1 ? "CPUs" : "CPU"}`
          }
          points={points}
          series={{ name: "cpu", label: "CPU %", color: "blue.7" }}
          max={100}
          unit=" %"
          aria-label="CPU use over the last minute"
        />
        <MetricChart
          title="Memory"
          testId="memory-now"
          now={latest && `${Math.round(latest.mem_used_mib)} of ${Math.round(latest.mem_total_mib)} MiB`}
          points={points}
          series={{ name: "memory", label: "Memory MiB", color: "teal.7" }}
          max={latest && Math.ceil(latest.mem_total_mib)}
          unit=" MiB"
          axisWidth={memoryAxisWidth}
          aria-label="Memory use over the last minute"
        />
      </SimpleGrid>
    </Stack>
  );
}

/** One live chart: its title, the latest value in words, and the last minute drawn from 0 to `max`. */
function MetricChart(props: {
  title: string;
  testId: string;
  now: string | undefined;
  points: Array<Record<string, string | number>>;
  series: { name: string; label: string; color: string };
  max: number | undefined;
  unit: string;
  axisWidth?: number;
  "aria-label": string;
}) {
  const { max, axisWidth: width } = props;
  return (
    <Card withBorder>
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h5">
          {props.title}
        </Title>
        <Text size="sm" data-testid={props.testId}>
          {props.now ?? "waiting…"}
        </Text>
      </Group>
      <LineChart
        h={200}
        data={props.points}
        dataKey="time"
        series={[props.series]}
        yAxisProps={
          max
            ? { domain: [0, max], ticks: [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * max)), width }
            : { domain: [0, "auto"], width }
        }
        withDots={false}
        curveType="monotone"
        unit={props.unit}
        aria-label={props["aria-label"]}
      />
    </Card>
  );
}
