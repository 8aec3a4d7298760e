#!/usr/bin/env bash
# install-chromium.sh: installs headless Chromium from Debian's packages for
# the browser test of `irqlab compare --html` (crates/irqlab/tests/
# compare_browser.rs), which loads the report headless, dumps the rendered
# DOM and takes a screenshot. Tolerant of failure: without Chromium that
# test skips with a visible reason, so this script always exits 0 and only
# says what happened.
set -uo pipefail
for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then
        echo "install-chromium: $c already installed"
        exit 0
    fi
done
export DEBIAN_FRONTEND=noninteractive
if apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
        apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1; }; then
    echo "install-chromium: installed $(chromium --version 2>/dev/null || echo chromium)"
else
    echo "install-chromium: could not install chromium; the compare browser test will skip"
fi
exit 0
