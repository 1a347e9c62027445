// Run once at image build, inside the image (`RUN` in its Dockerfile): starts execd under the
// path sandboxes see it at, answers one /ping, and writes the code V8 compiled on the way into
// execd's compile cache, which sandboxes then read instead of compiling execd at every start.
"use strict";
const { chmodSync, readdirSync, statSync } = require("node:fs");
const { get } = require("node:http");
const { enableCompileCache, flushCompileCache } = require("node:module");
const { join } = require("node:path");

const root = "/opt/paddock";
const cache = join(root, "compile-cache");
const status = enableCompileCache(cache);
if (!status.directory) throw new Error(`cannot enable the compile cache: ${status.message}`);
process.env.PADDOCK_EXECD_TOKEN = "image-build";
require(join(root, "execd-main.js"));

/** Readable by every user a sandbox's image may run execd as; written by none. */
function readOnlyForAll(path) {
  chmodSync(path, statSync(path).isDirectory() ? 0o555 : 0o444);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) readOnlyForAll(join(path, entry));
}

function ping(attempt) {
  const request = get(
    { host: "127.0.0.1", port: 44772, path: "/ping", headers: { "X-EXECD-ACCESS-TOKEN": "image-build" } },
    (response) => {
      response.resume();
      response.on("end", () => {
        if (response.statusCode !== 200) throw new Error(`execd answered /ping with ${response.statusCode}`);
        flushCompileCache();
        readOnlyForAll(cache);
        process.exit(0);
      });
    },
  );
  request.on("error", (error) => {
    if (attempt > 100) throw error;
    setTimeout(() => ping(attempt + 1), 50);
  });
}
ping(0);
