import { runForwarder } from "./forwarder.js";
import { startSidecar } from "./sidecar.js";

// One bundle, two roles: the sidecar, and (as its child, under another uid) the upstream forwarder.
const [, entry = "", role, argument] = process.argv;
if (role === "forwarder" && argument) {
  runForwarder(JSON.parse(argument));
} else {
  startSidecar(entry).catch((error: unknown) => {
    process.stderr.write(`egress sidecar failed to start: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
