export { resolveApiKey, StartupError } from "./api-key.js";
export { auditEventsOf } from "./audit-export.js";
export { type PaddockServer, type RegisteredRoute, type ServerOptions, startServer } from "./server.js";
