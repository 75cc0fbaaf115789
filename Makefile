# Two entry points (see README): `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

LOCK   := constraints.txt

.PHONY: install lock book site lab test test-arith lint notebooks clean

# Install the package and its book and test extras at the exact versions in $(LOCK), the ones the
# stored outputs were made with.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]" -c $(LOCK)
	touch $(STAMP)

install: $(STAMP)

# Regenerate $(LOCK) from pyproject's extras: the newest versions pip resolves today, installed
# into a scratch venv and frozen. Then `make notebooks` and commit both (see README).
LOCK_VENV := .lock-venv
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet -e ".[test]"
	{ echo "# Exact versions of every dependency of normcore[test] (make install uses this file)."; \
	  echo "# Made by \`make lock\` with $$($(LOCK_VENV)/bin/python --version); do not edit by hand."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable --exclude normcore; } > $(LOCK)
	rm -rf $(LOCK_VENV)

# Build the static site: refresh _toc.yml from the chapters present, then run every chapter and
# rebuild every page (--all: an unchanged page's warnings must fail the build too).
SITE_INPUTS := _config.yml $(wildcard book/*.md) tools/make_toc.py \
	$(shell find normcore book/_vendor book/_site -type f -not -path '*/__pycache__/*' 2>/dev/null)

book: $(STAMP)
	$(BIN)/python tools/make_toc.py > /dev/null
	$(BIN)/jupyter-book build . --all -W -n --keep-going

# The same, but only when a chapter, the package, the config or a static file has changed.
site: _build/html/index.html
_build/html/index.html: $(STAMP) $(SITE_INPUTS)
	$(MAKE) book

# Write each chapter's .md into its .ipynb, run it in a fresh kernel, store the outputs; then
# check that every pair is in step.
notebooks: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py
	$(BIN)/python tools/check_pairing.py

# Open the chapters live in JupyterLab (open an .ipynb: saving it writes its paired .md too).
lab: $(STAMP)
	$(BIN)/jupyter lab book/

# Every test: unit, property, notebook (nbval) and site tests (the site is rebuilt if stale).
test: $(STAMP) _build/html/index.html
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile --nbval tests book

# The same notebooks and the numeric tests under several CPU arithmetic settings (BLAS kernels,
# numpy's SIMD loops), with the stored outputs unchanged: `tools/arith_matrix.py --list` says which.
test-arith: $(STAMP)
	$(BIN)/python tools/arith_matrix.py

clean:
	rm -rf _build
