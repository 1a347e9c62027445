export * from "./docker-exec.js";
export * from "./execd-run.js";
export * from "./fake-kube-api.js";
export * from "./records.js";
export * from "./snapshots.js";
export * from "./test-image.js";
export * from "./test-stack.js";
