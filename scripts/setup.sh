#!/usr/bin/env bash
# One-command set-up for a fresh Debian 12 machine, as root. Idempotent: every step checks first
# and is skipped quickly when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '==> %s\n' "$*"; }

packages=(docker.io nftables iptables iproute2 debootstrap tini busybox-static postgresql docker-registry apache2-utils curl ca-certificates gcc g++ libc6-dev patch tmux python3-httpx python3-pytest python3-pytest-asyncio python3-venv mypy chromium)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  step "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Node.js, before anything that runs it: Paddock runs on the LTS that install-node.sh pins (Debian 12
# ships 18), installed from the npm registry into /usr/local unless it is there (decision 0179).
bash scripts/install-node.sh "${PADDOCK_NODE_PREFIX:-/usr/local}"

# gVisor: Debian 12's runsc (2022-12) fails coreutils 9's statx, so `ls` and `stat` answer
# "Invalid argument" in every sandbox; Debian 13's (0.0~20240729) runs them but answers lgetxattr
# on a symlink with EBADF (`ls -l` errors) and cannot start its own network stack on recent
# kernels. So runsc is built from trixie's source package with those two fixed (decision 0177),
# only when the installed build is not this one. apt reads trixie (binaries and sources) at
# priority 1 for every package, so nothing is installed or upgraded from it.
trixie_sources="Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
trixie_preferences="Package: *
Pin: release n=trixie
Pin-Priority: 1"
trixie_read=""
read_trixie() {
  [ -n "$trixie_read" ] && return
  # The preferences first: trixie must never be read at the default priority.
  [ "$(cat /etc/apt/preferences.d/paddock-runsc 2>/dev/null)" = "$trixie_preferences" ] ||
    echo "$trixie_preferences" >/etc/apt/preferences.d/paddock-runsc
  [ "$(cat /etc/apt/sources.list.d/paddock-trixie.sources 2>/dev/null)" = "$trixie_sources" ] ||
    echo "$trixie_sources" >/etc/apt/sources.list.d/paddock-trixie.sources
  apt-get update -q
  trixie_read=1
}
runsc_path=/usr/local/lib/paddock/runsc
runsc_version="$(bash scripts/build-runsc.sh "$runsc_path" --print-version)"
if [ "$("$runsc_path" --version 2>/dev/null | head -n 1)" != "runsc version $runsc_version" ]; then
  step "building gVisor runsc $runsc_version from Debian trixie's source into $runsc_path (a few minutes)"
  read_trixie
  bash scripts/build-runsc.sh "$runsc_path"
fi

# CRIU, with which runc checkpoints a sandbox paused to disk with its memory (decision 0196):
# Debian 12's 3.17 cannot start on this kernel, so 4.1.1 is built from trixie's source, with a
# fix, into /usr/local/sbin, where runc finds it on its PATH before any Debian criu.
criu_path=/usr/local/sbin/criu
criu_version="$(bash scripts/build-criu.sh "$criu_path" --print-version)"
if ! "$criu_path" --version 2>/dev/null | grep -qx "GitID: $criu_version"; then
  step "building CRIU $criu_version from Debian trixie's source into $criu_path (a minute)"
  read_trixie
  bash scripts/build-criu.sh "$criu_path"
fi

# Each idle gVisor sandbox is ~80 host tasks: Linux's default pid_max (32768) caps a host near
# 350 sandboxes. Raised for this boot only; persist it in /etc/sysctl.d for production hosts.
if (($(cat /proc/sys/kernel/pid_max) < 4194304)); then
  step "raising kernel.pid_max to 4194304 (room for hundreds of gVisor sandboxes)"
  sysctl -q -w kernel.pid_max=4194304 || echo "could not raise kernel.pid_max; density is capped near 350 gVisor sandboxes"
fi

# Docker's default seccomp profile, which runc sandboxes extend for isolated sessions (decision
# 0090): dockerd keeps it compiled in, Debian ships it as source in the engine's -dev package.
seccomp_profile=/usr/local/share/paddock/docker-default-seccomp.json
if [ ! -f "$seccomp_profile" ]; then
  step "extracting Docker's default seccomp profile into $seccomp_profile"
  scratch="$(mktemp -d)"
  (cd "$scratch" && apt-get download -q golang-github-docker-docker-dev >/dev/null 2>&1)
  mkdir -p "$(dirname "$seccomp_profile")"
  dpkg-deb --fsys-tarfile "$scratch"/golang-github-docker-docker-dev_*.deb |
    tar -xO ./usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json >"$seccomp_profile"
  rm -rf "$scratch"
fi

step "registering gVisor (runsc, runsc-netstack) as Docker runtimes, with checkpoints (experimental)"
registered="$(node scripts/register-runsc.mjs /etc/docker/daemon.json)"

# "experimental" (Docker's checkpoint API, decision 0194) is read only when dockerd starts, not on
# SIGHUP: a running dockerd without it is stopped here and started below. Its containers stop
# with it, so this happens once, on the first setup that asks for it. (`docker info --format`
# prints "false" also when no daemon answers, and a pid file can outlive its dockerd: both are
# checked.)
if docker info >/dev/null 2>&1 && [ "$(docker info --format '{{.ExperimentalBuild}}')" = "false" ]; then
  docker_pid="$(pidof dockerd || true)"
  if [ -n "$docker_pid" ]; then
    step "restarting dockerd to enable its checkpoint API"
    kill "$docker_pid"
    for _ in $(seq 1 60); do
      kill -0 "$docker_pid" 2>/dev/null || break
      sleep 1
    done
  else
    echo "dockerd runs where this machine cannot restart it: no checkpoints (pauses to disk keep files only)" >&2
  fi
fi

if ! docker info >/dev/null 2>&1; then
  # A dockerd that is still starting or stopping does not answer yet; let it finish first.
  docker_pid="$(pidof dockerd || true)"
  for _ in $(seq 1 60); do
    if [ -z "$docker_pid" ] || ! kill -0 "$docker_pid" 2>/dev/null || docker info >/dev/null 2>&1; then
      break
    fi
    sleep 1
  done
fi
if ! docker info >/dev/null 2>&1; then
  step "starting dockerd (log: /var/log/paddock-dockerd.log)"
  # In a session of its own: dockerd outlives the command that set it up (`make run` stopped with
  # its process group must not take the engine and its sandboxes with it).
  setsid nohup dockerd >/var/log/paddock-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    tail -n 30 /var/log/paddock-dockerd.log >&2
    echo "dockerd did not answer within 60 s" >&2
    exit 1
  fi
elif [ -n "$registered" ] || ! docker info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then
  # dockerd reads runtimes again on SIGHUP; running containers are not touched.
  step "reloading dockerd's runtimes"
  kill -HUP "$(pidof dockerd)"
  sleep 2
fi

# Native modules: node-gyp uses the headers installed beside the running node (it cannot download
# them), even where it only finds a module's own prebuilt binary. What it builds fits one Node ABI:
# node_modules records the ABI it was installed for, and is installed again when node changes.
node_home="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
# (node-gyp's own setting: npm 11 warns of its npm_config_nodedir, a key npm does not know.)
[ -f "$node_home/include/node/node_version.h" ] && export npm_package_config_node_gyp_nodedir="$node_home"
node_abi="$(node -p '`${process.platform}-${process.arch} node ABI ${process.versions.modules}`')"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  [ "$(cat node_modules/.paddock-node-abi 2>/dev/null)" != "$node_abi" ]; then
  step "installing npm dependencies (Node $(node --version), $node_abi)"
  npm ci --no-audit --no-fund --no-update-notifier
  echo "$node_abi" >node_modules/.paddock-node-abi
fi

step "building TypeScript"
npm run build --silent

step "building the base image paddock/base:bookworm when absent or stale (debootstrap + docker import)"
bash scripts/build-base-image.sh --if-stale

step "building component images"
npm run image --workspaces --if-present --silent

step "building template images (each skipped when current)"
npx paddock templates build python node ubuntu code-interpreter e2b-base e2b-code-interpreter
