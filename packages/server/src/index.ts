export { resolveApiKey, StartupError } from "./api-key.js";
export { type PaddockServer, type ServerOptions, startServer } from "./server.js";
