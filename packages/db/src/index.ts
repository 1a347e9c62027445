export * from "./connect.js";
export { migrate } from "./migrations.js";
export * from "./schema.js";
export * from "./testing.js";
