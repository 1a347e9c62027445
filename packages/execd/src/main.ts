import { dirname } from "node:path";
import {
  EXECD_CPU_LIMIT_ENV,
  EXECD_PORT,
  EXECD_TOKEN_ENV,
  EXECD_WAIT_EGRESS_ENV,
  restoreStashedVariables,
} from "@paddock/common/contracts";
import { startEntrypoint, waitForEgress } from "./entrypoint.js";
import { Environment } from "./environment.js";
import { createExecd } from "./http/server.js";
import {
  agentShellPrefix,
  ISOLATED_AGENT_PRIVATE_PROC_ENV,
  ISOLATED_AGENT_SOCKET_ENV,
} from "./isolated/agent.js";

// execd's own process keeps no copy of the token in its environment: children never see it.
const token = process.env[EXECD_TOKEN_ENV];
delete process.env[EXECD_TOKEN_ENV];
const waitEgress = process.env[EXECD_WAIT_EGRESS_ENV] === "1";
delete process.env[EXECD_WAIT_EGRESS_ENV];
const cpuLimit = Number(process.env[EXECD_CPU_LIMIT_ENV]) || undefined;
delete process.env[EXECD_CPU_LIMIT_ENV];
if (!token) console.error(`execd: ${EXECD_TOKEN_ENV} is not set; every request will be refused`);
// Set when this execd is an isolated session's agent: it serves that session on a Unix socket.
const agentSocket = process.env[ISOLATED_AGENT_SOCKET_ENV];
delete process.env[ISOLATED_AGENT_SOCKET_ENV];
const privateProc = process.env[ISOLATED_AGENT_PRIVATE_PROC_ENV] === "1";
delete process.env[ISOLATED_AGENT_PRIVATE_PROC_ENV];

// The sandbox's NODE_* variables, kept from execd's own Node, go to every process it starts.
const env = new Environment(restoreStashedVariables(process.env));
// An agent keeps its own files (its shell's run scripts) in the session's private tmpfs: out of a
// workspace under /tmp, and out of its commands' environment, which was copied just above.
if (agentSocket) process.env.TMPDIR = dirname(agentSocket);
const separator = process.argv.indexOf("--");
const userEntrypoint = separator >= 0 ? process.argv.slice(separator + 1) : [];

// envd's file metadata, on the sandbox's own disk so that it outlives a restart of execd (an
// isolated session's agent keeps its session's in memory).
const fileMetadataPath = agentSocket ? undefined : "/var/lib/paddock-execd/file-metadata.jsonl";
const execd = createExecd({
  token,
  env,
  cpuLimit,
  isolated: agentSocket === undefined,
  fileMetadataPath,
  // A session's shell gets a PID namespace of its own inside the session's.
  ...(agentSocket ? { shellPrefix: agentShellPrefix(privateProc) } : {}),
});
process.on("uncaughtException", (error) => console.error(`execd: ${error.stack ?? error.message}`));
process.on("unhandledRejection", (error) => console.error(`execd: ${String(error)}`));

if (agentSocket) {
  execd.server.listen(agentSocket);
} else {
  execd.server.listen(EXECD_PORT, "0.0.0.0");
  // No top-level await: the image bundles execd as CommonJS (see scripts/build-image.mjs).
  void (waitEgress ? waitForEgress() : Promise.resolve()).then(() => startEntrypoint(userEntrypoint, env));
}
