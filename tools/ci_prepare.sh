#!/bin/sh
# What .ci/run installs before the tests: the tests' oracles.
#   chromium (Debian)       the browser tests (tests/browser/) and the PDF; playwright drives it,
#                           and no browser is ever downloaded by playwright
#   poppler-utils (Debian)  pdftotext/pdfinfo/pdfimages read the PDF (tests/test_take_away.py)
#   nodejs (Debian)         the widgets' JavaScript under node, version 18 or later (tests/js/,
#                           tests/test_widget_*.py, tests/test_playground.py)
#   playwright (pip)        the driver for chromium
#   torch 2.13.0 (pip, CPU) tests/test_torch_agreement.py and the other PyTorch comparisons
# These are oracles, so this script fails loudly (exit 1, saying what is missing) when it cannot
# install one, and .ci/run stops there. A developer who runs `make test` without them sees those
# tests skip, with the reason; under CI=true they fail instead.
set -u
cd "$(dirname "$0")/.."
failed=""

# apt_install COMMAND PACKAGE: install Debian's PACKAGE unless COMMAND is already on PATH.
apt_install() {
    command -v "$1" >/dev/null 2>&1 && return 0
    if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != "0" ]; then
        failed="$failed $2(no apt-get, or not root)"
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq "$2" >/dev/null 2>&1; then
        apt-get update -qq >/dev/null 2>&1 || true
        apt-get install -y -qq "$2" >/dev/null 2>&1 || failed="$failed $2(apt-get install failed)"
    fi
}

[ -x /usr/bin/chromium ] || apt_install chromium chromium
apt_install pdftotext poppler-utils
apt_install node nodejs
# the widget bundles are ES modules using Array.from, padStart and top-level await: node 18+
if command -v node >/dev/null 2>&1; then
    node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
    [ "$node_major" -ge 18 ] 2>/dev/null || failed="$failed node(version $node_major, need 18+)"
fi

if [ ! -x .venv/bin/pip ]; then
    echo "ci_prepare: FAILED: no .venv (run make install first)" >&2
    exit 1
fi
if ! .venv/bin/python -c "import playwright" >/dev/null 2>&1; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 .venv/bin/pip install --quiet "playwright>=1.50" \
        || failed="$failed playwright(pip install failed)"
fi
# torch exactly 2.13.0, the version the agreement tests were written against; its CPU wheel is
# large, so give up after five minutes rather than hang CI.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    timeout 300 .venv/bin/pip install --quiet "torch==2.13.0" \
        || failed="$failed torch(pip install torch==2.13.0 failed)"
fi
if [ -n "$failed" ]; then
    echo "ci_prepare: FAILED to install the tests' oracles:$failed" >&2
    exit 1
fi
echo "ci_prepare: chromium, poppler-utils, node, playwright and torch are ready"
