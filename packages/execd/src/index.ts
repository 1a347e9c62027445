export { Environment } from "./environment.js";
export { createExecd, type Route, route } from "./http/server.js";
