#!/usr/bin/env bash
# Installs Debian's chromium, the real browser mutants' page test renders mutants.html in
# (headless: a screenshot and the DOM after the page's script ran). The test skips with a
# printed notice when /usr/bin/chromium is missing, so CI runs this script first for it to
# count. Safe to run twice: an installed chromium is left as it is.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    /usr/bin/chromium --version 2>/dev/null || true
    exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
# A font too: on a bare image without one, every glyph in the screenshot is a box.
$sudo apt-get install -y chromium fonts-dejavu-core
/usr/bin/chromium --version
