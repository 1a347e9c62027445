#!/bin/sh
# Makes Playwright's own lookup find Debian's Chromium: for the revision this playwright-core
# expects, both "chromium" (headed) and "chromium-headless-shell" (headless, the default) resolve
# to /usr/bin/chromium inside $PLAYWRIGHT_BROWSERS_PATH, so chromium.launch() works unchanged.
set -eu
revision() {
  node -p "require('/usr/local/lib/node_modules/playwright-core/browsers.json').browsers.find((b) => b.name === '$1').revision"
}
link() {
  mkdir -p "$(dirname "$1")"
  ln -s /usr/bin/chromium "$1"
}
link "$PLAYWRIGHT_BROWSERS_PATH/chromium-$(revision chromium)/chrome-linux64/chrome"
link "$PLAYWRIGHT_BROWSERS_PATH/chromium_headless_shell-$(revision chromium-headless-shell)/chrome-headless-shell-linux64/chrome-headless-shell"
