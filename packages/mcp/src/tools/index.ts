import type { PaddockTool } from "../tool.js";
import { runCode, runCommand } from "./command-tools.js";
import { listDirectory, readFile, writeFile } from "./file-tools.js";
import { createSandbox, getEndpoint, killSandbox, listSandboxes, listTemplates } from "./sandbox-tools.js";

/** Every tool, in the order clients list them. */
export const tools: readonly PaddockTool[] = [
  createSandbox,
  listSandboxes,
  killSandbox,
  runCommand,
  runCode,
  readFile,
  writeFile,
  listDirectory,
  getEndpoint,
  listTemplates,
];
