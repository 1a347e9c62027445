export { type E2bApiOptions, e2bApi } from "./api.js";
export { type E2bGatewayOptions, installE2bGateway } from "./gateway.js";
export { envdAccessToken, sandboxDomain, templateAliases, trafficAccessToken } from "./wire.js";
