/**
 * The built-in JavaScript driver: one Node process per context with a persistent `vm` context.
 * Same protocol as the Python driver (cells on fd 3, replies on fd 4, output on fds 1 and 2).
 */
export const javascriptDriver = String.raw`
const fs = require("node:fs");
// A cell's output waits for room in its pipe, as Python's does: a client that is behind holds
// the cell back instead of the output piling up in this process.
for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true);
const readline = require("node:readline");
const util = require("node:util");
const vm = require("node:vm");
const control = fs.createWriteStream(null, { fd: 4 });
const send = (message) => control.write(JSON.stringify(message) + "\n");
const context = vm.createContext({ console, require, process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, fetch, URL, TextEncoder, TextDecoder });
// TypeScript contexts run the same driver with types stripped first (Node ≥ 22.13).
const typescript = process.env.PADDOCK_DRIVER_LANGUAGE === "typescript";
delete process.env.PADDOCK_DRIVER_LANGUAGE;
const prepare = typescript ? (code) => require("node:module").stripTypeScriptTypes(code, { mode: "strip" }) : (code) => code;
let count = 0;
let queue = Promise.resolve();
const cells = readline.createInterface({ input: fs.createReadStream(null, { fd: 3 }) });
cells.on("line", (line) => {
  queue = queue.then(async () => {
    const request = JSON.parse(line);
    count += 1;
    send({ type: "execution_count", execution_count: count });
    // Variables for this cell only: what they were is put back afterwards.
    const saved = Object.entries(request.env || {}).map(([name, value]) => {
      const was = process.env[name];
      process.env[name] = value;
      return [name, was];
    });
    try {
      let value = vm.runInContext(prepare(request.code), context, { filename: "<cell>", breakOnSigint: true });
      if (value && typeof value.then === "function") value = await value;
      if (value !== undefined) {
        const results = { "text/plain": util.inspect(value, { depth: 4 }) };
        try {
          if (value !== null && typeof value === "object") results["application/json"] = JSON.parse(JSON.stringify(value));
        } catch {}
        send({ type: "result", results });
      }
    } catch (error) {
      const name = error && error.name ? error.name : "Error";
      const stack = error && error.stack ? String(error.stack).split("\n") : [String(error)];
      send({ type: "error", error: { ename: name, evalue: error && error.message !== undefined ? String(error.message) : String(error), traceback: stack } });
    }
    for (const [name, was] of saved) {
      if (was === undefined) delete process.env[name];
      else process.env[name] = was;
    }
    await new Promise((resolve) => process.stdout.write(request.marker, resolve));
    await new Promise((resolve) => process.stderr.write(request.marker, resolve));
    send({ type: "done", execution_count: count });
  });
});
process.on("SIGINT", () => {});
`;
