/**
 * Many attacks in one shell run: each probe is a bash snippet that exits 0 only when its attack
 * worked. The script prints one line per probe (name, exit code, the first bytes of its output),
 * so a test can assert each attack on its own while the sandbox starts one command per group.
 */
export interface ProbeResult {
  exitCode: number;
  output: string;
}

export type Probes = Record<string, string>;

/**
 * `parallel`: network probes wait on timeouts, so they run side by side, a few at a time (two
 * dozen at once have stopped a gVisor sandbox on a loaded machine).
 */
export function probeScript(probes: Probes, options: { parallel?: boolean; timeoutSeconds?: number } = {}) {
  const timeout = options.timeoutSeconds ?? 20;
  const lines = [
    "probe() {",
    `  out=$(timeout -s KILL ${timeout} bash -c "$(printf %s "$2" | base64 -d)" 2>&1 </dev/null); rc=$?`,
    `  printf '@@%s\\t%s\\t%s\\n' "$1" "$rc" "$(printf %s "$out" | tr '\\n\\t' '  ' | head -c 400)"`,
    "}",
  ];
  for (const [name, code] of Object.entries(probes)) {
    if (options.parallel) lines.push("while [ $(jobs -rp | wc -l) -ge 6 ]; do wait -n; done");
    lines.push(`probe ${name} ${Buffer.from(code).toString("base64")}${options.parallel ? " &" : ""}`);
  }
  lines.push("wait");
  return lines.join("\n");
}

export function parseProbes(stdout: string): Map<string, ProbeResult> {
  const results = new Map<string, ProbeResult>();
  for (const line of stdout.split("\n")) {
    const match = /^@@([^\t]+)\t(\d+)\t(.*)$/.exec(line);
    if (match) results.set(match[1] ?? "", { exitCode: Number(match[2]), output: match[3] ?? "" });
  }
  return results;
}
