export {
  type ErrorShape,
  frameworkErrorHandler,
  installErrorHandling,
  installJsonBodies,
  installQueryChecks,
  installValidation,
  jsonText,
  notUnicode,
} from "./error-handling.js";
export { echoRequestId } from "./request-id.js";
