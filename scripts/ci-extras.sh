#!/usr/bin/env bash
# System packages the tests need beyond Node, Postgres and Redis. .ci/run calls this before
# `npm ci`; it is safe to run again (nothing is installed twice).
#  - chromium: the browser test of the HTML pages (apps/api/test/pages.browser.test.ts) drives
#    Debian's Chromium through playwright-core, which downloads no browser of its own.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  echo "installing chromium (for the browser test of the pages)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y chromium fonts-dejavu-core
fi
# (Debian's wrapper script complains on stderr about its memory check; the version is what matters)
/usr/bin/chromium --version 2>/dev/null
