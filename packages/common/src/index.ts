export * from "./config.js";
export * from "./contracts.js";
export * from "./error-shapes.js";
export * from "./errors.js";
export * from "./ids.js";
export * from "./logging.js";
export * from "./quantities.js";
export * from "./sse.js";
