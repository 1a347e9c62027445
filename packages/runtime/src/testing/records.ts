import { defaultLifecycle, type Sandbox } from "../model.js";

/** A Running sandbox record with empty defaults, for tests that write the repository directly. */
export function sandboxRecord(id: string, fields: Partial<Sandbox> = {}): Sandbox {
  const now = new Date().toISOString();
  return {
    id,
    owner: null,
    status: { state: "Running", lastTransitionAt: now },
    entrypoint: ["sleep", "infinity"],
    metadata: {},
    extensions: {},
    resourceLimits: {},
    secureAccess: false,
    createdAt: now,
    updatedAt: now,
    lifecycle: defaultLifecycle,
    ...fields,
  };
}
