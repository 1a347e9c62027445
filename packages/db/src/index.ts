export * from "./audit-log.js";
export * from "./broadcasts.js";
export * from "./connect.js";
export * from "./leases.js";
export * from "./locks.js";
export { migrate } from "./migrations.js";
export * from "./schema.js";
export * from "./testing.js";
