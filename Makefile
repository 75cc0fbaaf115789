# Two entry points (see README): `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

LOCK   := constraints.txt

# A failed build leaves no target behind that looks up to date (a half-built site, say).
.DELETE_ON_ERROR:

.PHONY: install lock book site lab test test-arith lint notebooks clean pdf \
	claims claims-record fresh-seeds visible-cells

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

# Open the chapters live in JupyterLab, from a working copy in lab/ (tools/lab_book.py): the
# numbers filled into the prose, hidden cells folded away, and the book's own files untouched
# whatever the reader runs or saves. Root (a container, a cloud VM) needs --allow-root.
LAB_PORT ?= 8888
LAB_FLAGS := --ServerApp.port=$(LAB_PORT) --LabApp.news_url= $(if $(DISPLAY)$(WAYLAND_DISPLAY),,--no-browser) \
	--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	$(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	PATH="$(BIN):$$PATH" bash postBuild   # lab/, and no news or update pop-ups (as on Binder)
	@echo "Point your browser at the http://127.0.0.1:PORT/lab?token=... address JupyterLab prints"
	@echo "below (port $(LAB_PORT) unless taken). On a remote machine or in a container, forward that"
	@echo "port first (ssh -L $(LAB_PORT):localhost:$(LAB_PORT) ..., docker run -p $(LAB_PORT):$(LAB_PORT))."
	$(BIN)/jupyter lab --ServerApp.root_dir=lab $(LAB_FLAGS)

# Lint: ruff check over the whole tree, and ruff format --check over the files formatted so far
# (the core package and its tests; the rest keep their hand layout until they are formatted:
# add a file to FORMATTED when `ruff format` has been applied to it).
FORMATTED := $(addprefix normcore/,__init__.py _checks.py _normaliser.py activations.py batch.py \
	  bench.py dense.py errors.py image.py layer.py loss.py oracle.py purpose.py reference.py \
	  responses.py sequential.py standardise.py worked.py fast experiments/rates exercises/ch07.py \
	  widgets/rates.py widgets/rates_model.py \
	  experiments/side_by_side.py) $(addprefix tests/browser/,conftest.py \
	  test_site_rate_widget.py) \
	$(addprefix tests/,test_errors.py test_fuzz_api.py test_fused.py test_oracle.py \
	  test_structure.py test_torch_agreement.py test_worked_numbers.py test_reference.py \
	  test_rates.py test_ghost_batch.py test_side_by_side.py test_remade.py)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check $(FORMATTED)

# Every test: lint, unit, property, notebook (nbval) and site tests (the site is rebuilt if stale).
test: lint $(STAMP) _build/html/index.html
	$(BIN)/python -m pytest -n 2 --dist loadfile --nbval tests book

# The same notebooks and the numeric tests under several CPU arithmetic settings (BLAS kernels,
# numpy's SIMD loops), with the stored outputs unchanged: `tools/arith_matrix.py --list` says which.
test-arith: $(STAMP)
	$(BIN)/python tools/arith_matrix.py

# The claims suite alone (tests/claims/: each conclusion re-run on fresh seeds; `make test` runs
# it too), and the same storing the frequencies it measures (then `make notebooks`).
claims: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile -m claims tests/claims

claims-record: $(STAMP)
	NORMCORE_CLAIMS_WRITE=1 $(BIN)/python -m pytest -n 2 --dist loadfile -m claims tests/claims

# Every chapter with every seed moved (two offsets; any other must pass too), and with only the
# cells a reader sees: tools/fresh_seeds.py.
FRESH_OFFSETS ?= 3 11
fresh-seeds: $(STAMP)
	set -e; for k in $(FRESH_OFFSETS); do $(BIN)/python tools/fresh_seeds.py --offset $$k; done

visible-cells: $(STAMP)
	$(BIN)/python tools/fresh_seeds.py --visible

clean:
	rm -rf _build
