export { AccountLimits, type LimitSettings, type MeteredCall } from "./account-limits.js";
export { ControlPlaneErrors } from "./errors.js";
export { Identity, type Principal, type Scope } from "./identity.js";
export { generateErrorsDoc, generateOpenApi, registerOpenApi } from "./openapi.js";
export { type ControlPlaneOptions, controlPlane } from "./plugin.js";
export { RateCounters } from "./rate-limit.js";
export { publicEndpointRoute } from "./routes/endpoints.js";
export { routeUpgrade } from "./websocket-upgrade.js";
