export { maxImageBytes, maxTextBytes } from "./bounded-output.js";
export { answerJsonRpcError, serveMcpHttp } from "./http.js";
export { paddockMcpServer } from "./mcp-server.js";
export { serveMcpStdio } from "./stdio.js";
export { type Surface, surfacesOfScope } from "./surfaces.js";
export type { PaddockConnection } from "./tool-results.js";
