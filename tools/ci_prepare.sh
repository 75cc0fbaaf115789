#!/bin/sh
# What .ci/run installs before the README's test command: Debian's chromium and the playwright
# package for the browser tests (tests/browser/), and PyTorch 2.13.0 for
# tests/test_torch_agreement.py. No browser is downloaded by playwright: the tests launch
# /usr/bin/chromium. These are the tests' oracles, so this script fails loudly (exit 1, saying
# what is missing) when it cannot install one; .ci/run stops there. A developer who runs
# `make test` without them sees those tests skip, with the reason.
set -u
cd "$(dirname "$0")/.."
failed=""
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
            || failed="$failed chromium(apt-get install failed)"
    else
        failed="$failed chromium(no apt-get, or not root)"
    fi
fi
command -v pdftotext >/dev/null 2>&1 || { [ "$(id -u)" = "0" ] && export DEBIAN_FRONTEND=noninteractive && { apt-get install -y -qq poppler-utils || { apt-get update -qq && apt-get install -y -qq poppler-utils; }; } >/dev/null 2>&1; } || failed="$failed poppler-utils(apt-get install failed)"
if [ ! -x .venv/bin/pip ]; then
    echo "ci_prepare: FAILED: no .venv (run make install first)" >&2
    exit 1
fi
if ! .venv/bin/python -c "import playwright" >/dev/null 2>&1; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 .venv/bin/pip install --quiet "playwright>=1.50" \
        || failed="$failed playwright(pip install failed)"
fi
# This machine keeps a CPU wheel of torch 2.13.0 on disk; any other version would download a
# multi-GB build, so ask for it exactly and give up after five minutes.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    timeout 300 .venv/bin/pip install --quiet "torch==2.13.0" \
        || failed="$failed torch(pip install torch==2.13.0 failed)"
fi
if [ -n "$failed" ]; then
    echo "ci_prepare: FAILED to install the tests' oracles:$failed" >&2
    exit 1
fi
echo "ci_prepare: chromium, playwright and torch are ready"
