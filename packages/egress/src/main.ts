import { startSidecar } from "./sidecar.js";

startSidecar().catch((error: unknown) => {
  process.stderr.write(`egress sidecar failed to start: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
