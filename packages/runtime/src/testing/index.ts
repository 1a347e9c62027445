export * from "./docker-exec.js";
export * from "./test-stack.js";
