export { Environment } from "./environment.js";
export { createExecd, type Route, route } from "./server.js";
