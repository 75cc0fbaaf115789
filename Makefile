# Two entry points (see README): `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install book site lab test lint notebooks clean pdf

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

# Build the static site: refresh _toc.yml from the chapters present, then run every chapter and
# rebuild every page (--all: an unchanged page's warnings must fail the build too).
SITE_INPUTS := _config.yml $(wildcard book/*.md) tools/make_toc.py tools/make_pdf.py \
	$(shell find normcore book/_vendor book/_site book/_ext -type f -not -path '*/__pycache__/*' 2>/dev/null)

book: $(STAMP)
	$(BIN)/python tools/make_toc.py > /dev/null
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	$(BIN)/python tools/make_pdf.py --if-possible

# The whole book as one PDF (_build/pdf/normcore.pdf, copied into the site, which links it):
# the single-page build, printed by the browser tests' chromium. `make book` ends with it.
pdf: $(STAMP)
	$(BIN)/python tools/make_toc.py > /dev/null
	$(BIN)/python tools/make_pdf.py

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

clean:
	rm -rf _build
