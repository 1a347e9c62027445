export { accessTokenHeader } from "./access.js";
export { apiKeyHeaders, presentedApiKey, requireApiKey } from "./auth.js";
export {
  type ErrorShape,
  frameworkErrorHandler,
  installErrorHandling,
  installJsonBodies,
  installQueryChecks,
  installValidation,
} from "./http-errors.js";
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
