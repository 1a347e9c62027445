// Builds the egress sidecar image: Debian bookworm with nftables and iproute2 from apt, the host's
// Node binary, and the sidecar bundled into one file. Skips the build when an image with the same
// content exists; --force rebuilds (apt layer included).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const image = process.env.PADDOCK_EGRESS_IMAGE ?? "paddock/egress:0.1.0";
const baseImage = process.env.PADDOCK_BASE_IMAGE ?? "paddock/base:bookworm";
// The node running this build: the one setup installs (decision 0179), its binary copied whole.
const node = process.env.PADDOCK_EGRESS_NODE ?? process.execPath;
const force = process.argv.includes("--force");
const here = dirname(fileURLToPath(import.meta.url));
const stage = mkdtempSync(join(tmpdir(), "paddock-egress-"));
const started = Date.now();
const step = (message) =>
  console.log(`[egress image ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);

const dockerfile = `FROM ${baseImage}
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nftables iproute2 \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY node /usr/local/bin/node
COPY egress.js package.json /opt/paddock-egress/
LABEL paddock.content=CONTENT
ENTRYPOINT ["/usr/local/bin/node", "/opt/paddock-egress/egress.js"]
`;

function existingContent() {
  try {
    const format = '{{index .Config.Labels "paddock.content"}}';
    return execFileSync("docker", ["image", "inspect", "--format", format, image], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

try {
  step("bundling the sidecar with esbuild");
  await build({
    entryPoints: [join(here, "..", "src", "main.ts")],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    conditions: ["@paddock/source"],
    outfile: join(stage, "egress.js"),
    legalComments: "none",
    logLevel: "warning",
  });
  writeFileSync(join(stage, "package.json"), '{ "type": "module" }\n');
  // The binary must run against bookworm's libraries: it may link only what a minimal system has.
  const missing = execFileSync("ldd", [node], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("not found"));
  if (missing.length > 0) throw new Error(`${node} needs libraries that are missing: ${missing.join(", ")}`);
  copyFileSync(node, join(stage, "node"));

  const hash = createHash("sha256").update(dockerfile);
  for (const file of ["egress.js", "node"]) hash.update(readFileSync(join(stage, file)));
  const content = hash.digest("hex").slice(0, 16);
  if (existingContent() === content && !force) {
    step(`${image} is up to date (${content})`);
  } else {
    writeFileSync(join(stage, "Dockerfile"), dockerfile.replace("CONTENT", content));
    step(`building ${image} (${content}) from ${baseImage}`);
    execFileSync("docker", ["build", ...(force ? ["--no-cache"] : []), "-t", image, stage], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
    });
    step(`checking that node runs in ${image}`);
    const version = execFileSync(
      "docker",
      ["run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/node", image, "--version"],
      { encoding: "utf8" },
    ).trim();
    step(`built ${image} (node ${version})`);
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
