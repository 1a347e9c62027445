export { accessTokenHeader } from "./access.js";
export { apiKeyHeaders, presentedApiKey, requireApiKey } from "./auth.js";
export { type RuntimeApiOptions, runtimeApi } from "./plugin.js";
export {
  attachUpgradeProxy,
  forwardHttp,
  type ProxyRoute,
  runtimeProxyRoute,
  sandboxStillThere,
  splitPath,
  streamingBodies,
} from "./proxy.js";
