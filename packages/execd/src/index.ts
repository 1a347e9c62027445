export { Environment } from "./environment.js";
export { type Route, route } from "./http/router.js";
export { createExecd } from "./http/server.js";
