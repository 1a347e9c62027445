#!/bin/sh
# Installs code-server into /opt/npm the way its postinstall script would, except that
# @vscode/ripgrep (whose install script downloads a ripgrep build from outside the registry) is
# pointed at Debian's /usr/bin/rg, which the final image installs.
set -eux
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
npm install --global --prefix /opt/npm --ignore-scripts "$@"
root=/opt/npm/lib/node_modules/code-server
cd "$root"
# The top-level native module, argon2: its install script finds the bundled linux-x64 prebuild.
npm rebuild argon2
cd "$root/lib/vscode"
npm install --omit=dev --ignore-scripts
mkdir -p node_modules/@vscode/ripgrep/bin
ln -s /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
# Runs every dependency's install scripts: node-gyp builds against $npm_config_nodedir, and
# ripgrep's sees its bin/ in place and stops.
npm rebuild
ln -sf code-linux.sh bin/remote-cli/code-server
ln -sf browser-linux.sh bin/helpers/browser.sh
# Compiler intermediates of those builds: only build/Release/*.node is loaded.
find node_modules -type d \( -path '*/build/Release/obj.target' -o -path '*/build/Release/obj' \
  -o -path '*/build/Release/.deps' \) -prune -exec rm -rf {} +
cd extensions
npm install --omit=dev
