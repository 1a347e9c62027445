export { ControlPlaneErrors } from "./http/errors.js";
export { generateErrorsDoc, generateOpenApi, registerOpenApi } from "./http/openapi.js";
export { type ControlPlaneOptions, controlPlane } from "./http/plugin.js";
export { RateCounters } from "./http/rate-limit.js";
export { routeUpgrade } from "./http/websocket-upgrade.js";
export { Identity, type Principal, type Scope } from "./identity/identity.js";
export { type McpCaller, type McpEndpoint, maxMcpBodyBytes } from "./mcp/routes.js";
export { AccountLimits, type LimitSettings, type MeteredCall } from "./plans/account-limits.js";
export { publicEndpointRoute } from "./sandboxes/routes/endpoints.js";
