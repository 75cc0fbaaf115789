# Two entry points (see README): `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install book lab test lint notebooks clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

# Build the static site (executes every chapter; warnings are errors).
book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going

# Open the chapters live in JupyterLab.
lab: $(STAMP)
	$(BIN)/jupyter lab book/

# Every test: unit, property, notebook (nbval) and site tests.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 tests book

clean:
	rm -rf _build
