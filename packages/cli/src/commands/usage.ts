import type { Command } from "commander";
import { Paddock, type UsageSummary } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { describeSleep } from "../lifecycle.js";
import { formatTime, printJson, printRecord } from "../output.js";

const barWidth = 40;

/** `paddock usage`: this month's sandbox minutes against the plan's allowance. */
export function registerUsageCommand(program: Command): void {
  program
    .command("usage")
    .description("sandbox minutes used this month, against the plan's allowance")
    .option("--json", "print the summary as JSON")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { json?: boolean }>();
      const usage = await new Paddock(connectionOf(options)).usage.get();
      if (options.json) printJson(usage);
      else printUsage(usage);
    });
}

function printUsage(usage: UsageSummary): void {
  const used = usage.usedMinutes.toFixed(1);
  const allowance =
    usage.includedMinutes === null
      ? `${used} min used (no limit)`
      : `${meter(usage.usedMinutes, usage.includedMinutes)} ${used} of ${usage.includedMinutes} min`;
  printRecord([
    ["plan", `${usage.plan.name} (${usage.plan.id})`],
    ["period", `${usage.period.id} (until ${formatTime(usage.period.end)} UTC)`],
    ["minutes", allowance],
    ["remaining", usage.remainingMinutes === null ? "no limit" : `${usage.remainingMinutes.toFixed(1)} min`],
    ["running", `${usage.runningSandboxes} sandbox${usage.runningSandboxes === 1 ? "" : "es"}`],
    ["resumes", String(usage.resumes)],
    ["sleep", `${describeSleep(usage.plan.lifecycle)} (the plan's default)`],
  ]);
  if (usage.limitReached)
    console.log("\nThe plan's minutes are used up: creates and resumes are refused until the month ends.");
}

/** `[██████░░░░] 60%` */
function meter(used: number, included: number): string {
  const share = included > 0 ? Math.min(used / included, 1) : 1;
  const filled = Math.round(share * barWidth);
  return `[${"█".repeat(filled)}${"░".repeat(barWidth - filled)}] ${Math.round(share * 100)}%`;
}
