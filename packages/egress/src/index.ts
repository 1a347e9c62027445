export { createApi, MAX_BODY_BYTES } from "./api.js";
export { buildQuery, forgeAnswer, parseQuestion, readAddresses } from "./dns-wire.js";
export { DNS_PROXY_PORT, renderRuleset, TABLE } from "./nft-ruleset.js";
