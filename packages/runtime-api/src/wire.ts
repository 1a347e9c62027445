import type { Sandbox as SandboxModel, Snapshot as SnapshotModel } from "@paddock/runtime";
import { pauseDescription } from "./lifecycle-extensions.js";

/** The lifecycle wire shape of a sandbox; `full` adds the startup source (GET, list). */
export function sandboxToWire(sandbox: SandboxModel, full = true) {
  return {
    id: sandbox.id,
    status: statusToWire(sandbox),
    metadata: sandbox.metadata,
    extensions: sandbox.extensions,
    ...(sandbox.platform ? { platform: sandbox.platform } : {}),
    entrypoint: sandbox.entrypoint,
    ...(sandbox.expiresAt ? { expiresAt: sandbox.expiresAt } : {}),
    createdAt: sandbox.createdAt,
    ...(full && sandbox.image ? { image: { uri: sandbox.image.uri } } : {}),
    ...(full && sandbox.snapshotId ? { snapshotId: sandbox.snapshotId } : {}),
  };
}

/** OpenSandbox's status; a paused sandbox's message says how deep it sleeps (decision 0110). */
function statusToWire(sandbox: SandboxModel): SandboxModel["status"] {
  const depth = pauseDescription(sandbox);
  return depth && !sandbox.status.message ? { ...sandbox.status, message: depth } : sandbox.status;
}

export function snapshotToWire(snapshot: SnapshotModel) {
  return {
    id: snapshot.id,
    sandboxId: snapshot.sandboxId,
    ...(snapshot.name ? { name: snapshot.name } : {}),
    status: snapshot.status,
    createdAt: snapshot.createdAt,
  };
}
