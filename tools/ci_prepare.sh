#!/bin/sh
# What .ci/run installs before the README's test command: Debian's chromium and the playwright
# package for the browser tests (tests/browser/). No browser is downloaded by playwright: the
# tests launch /usr/bin/chromium. Never fails the run: without apt (or root) the browser tests
# skip and say what is missing.
set -u
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
            || echo "ci_prepare: could not apt-get install chromium; browser tests will skip"
    else
        echo "ci_prepare: no apt-get (or not root); browser tests will skip without chromium"
    fi
fi
command -v pdftotext >/dev/null 2>&1 || { [ "$(id -u)" = "0" ] && export DEBIAN_FRONTEND=noninteractive && { apt-get install -y -qq poppler-utils || { apt-get update -qq && apt-get install -y -qq poppler-utils; }; } >/dev/null 2>&1; } || echo "ci_prepare: could not apt-get install poppler-utils (pdftotext, pdfimages); the PDF tests will skip"
if [ -x .venv/bin/pip ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 .venv/bin/pip install --quiet "playwright>=1.50" \
        || echo "ci_prepare: could not pip install playwright; browser tests will skip"
else
    echo "ci_prepare: no .venv yet (make install first); playwright not installed"
fi
# PyTorch, for tests/test_torch_agreement.py (it skips without torch). This machine keeps a CPU
# wheel of 2.13.0 on disk; any other version would download a multi-GB build, so ask for it
# exactly and give up quietly after five minutes.
if [ -x .venv/bin/pip ] && ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    timeout 300 .venv/bin/pip install --quiet "torch==2.13.0" >/dev/null 2>&1 \
        || echo "ci_prepare: torch 2.13.0 not installed; PyTorch agreement tests will skip"
fi
exit 0
