# Two entry points (see README): `make book` and `make test`; `make check` while working.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

LOCK   := constraints.txt

# A failed build leaves no target behind that looks up to date (a half-built site, say).
.DELETE_ON_ERROR:

.PHONY: install lock book site lab check test suite test-arith lint format notebooks clean pdf \
	claims claims-record fresh-seeds visible-cells release student instructor serve wheel \
	release-check FORCE

# With REPORTS set (.ci/run sets REPORTS=_build/ci), every pytest run writes a JUnit XML report
# there, which tools/ci_report.py sums up at the end of CI.
REPORTS ?=
junit = $(if $(REPORTS),--junitxml=$(REPORTS)/$(1).xml)

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
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable --exclude normcore-book; } > $(LOCK)
	rm -rf $(LOCK_VENV)

# Build the static site. It RENDERS each chapter's stored run (book/NN-name.ipynb, made by
# `make notebooks`) and executes nothing, after checking that every .ipynb is in step with its .md;
# every page is rebuilt (--all: an unchanged page's warnings must fail the build too). _toc.yml is
# only read (tests/test_build.py checks it against the chapters present).
SITE_INPUTS := _config.yml _toc.yml $(wildcard book/*.md book/*.ipynb book/*.bib) \
	tools/make_pdf.py tools/chromium.py tools/check_pairing.py pyproject.toml \
	tools/teaching.py tools/figure_pack.py tools/exercise_notebooks.py tools/solutions_booklet.py \
	tools/teaching_guide.py book/figures.yml book/teaching.yml \
	$(shell find book/_vendor book/_site book/_ext -type f -not -path '*/__pycache__/*' 2>/dev/null)

# Then, from the same stored runs, what the chapter pages link for teachers (tools/teaching.py
# names them): the figure pack (SVG redrawn from the chapters' own cells in one process, held to
# the stored PNGs byte for byte; with PDF and 2x PNG for slides), the exercise notebooks, the
# solutions booklet (page and PDF) and the teaching guide.
# Editions (tools/teaching.py): `make book` builds the reader's edition (every worked solution
# folded under its exercise, for self-study) into _build/html; `make student` (or
# `make book EDITION=student`) the student edition into _build/student/_build/html: pages,
# chapter notebooks and PDF without any solution, exercise notebooks that point to none, no
# booklet, checked by tools/check_edition.py; `make instructor` the instructor bundle.
EDITION ?= reader
ifeq ($(EDITION),student)
book: student
else
book: $(STAMP)
	$(BIN)/python tools/check_pairing.py
	$(BIN)/python tools/release.py --wheel
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	$(BIN)/python tools/figure_pack.py
	$(BIN)/python tools/exercise_notebooks.py
	$(BIN)/python tools/make_pdf.py --if-possible
	$(BIN)/python tools/solutions_booklet.py
	$(BIN)/python tools/teaching_guide.py
endif

STUDENT := env NORMCORE_EDITION=student
student: $(STAMP)
	$(BIN)/python tools/check_pairing.py
	$(BIN)/python tools/release.py --wheel
	$(STUDENT) $(BIN)/jupyter-book build . --all -W -n --keep-going --path-output _build/student
	$(STUDENT) $(BIN)/python tools/figure_pack.py
	$(STUDENT) $(BIN)/python tools/exercise_notebooks.py
	$(STUDENT) $(BIN)/python tools/make_pdf.py --if-possible
	$(STUDENT) $(BIN)/python tools/teaching_guide.py
	$(STUDENT) $(BIN)/python tools/check_edition.py

# The instructor bundle (tools/instructor.py), from the reader's build: the solutions booklet
# and its PDF, the answer keys (each exercise notebook with its worked solutions), the teaching
# guide, a starter slide deck per chapter (PDF) and the figure pack, with the LICENSE, in
# _build/instructor/normcore-instructor-VERSION.zip.
instructor: _build/html/index.html
	$(BIN)/python tools/slides.py
	$(BIN)/python tools/instructor.py

# The reader's site over http (http://127.0.0.1:$(PORT)/): opened from disk (file://) every page
# works too, widgets included; this is for a browser that refuses file:// pages.
PORT ?= 8000
serve:
	$(BIN)/python tools/static_server.py --port $(PORT) $(if $(filter student,$(EDITION)),_build/student/_build/html,_build/html)

# A release (tools/release.py): refused before anything is built while CHANGELOG.md's
# Unreleased section holds entries, the versions differ, or HEAD is not the tag v<version>
# (nothing is bumped for you). Then the book (`make book` first builds the wheel and the sdist,
# the package as students install it, `pip install normcore_book-VERSION-py3-none-any.whl`, at
# the text's version, and the site links the wheel with that line),
# the student edition and the instructor bundle, gathered into
# _build/release/normcore-VERSION.zip with CITATION.cff, CHANGELOG.md, LICENSE and SHA256SUMS.
# It builds from a clean _build, so that no page an older build left (a chapter's former name)
# ships.
release-check:
	$(BIN)/python tools/release.py --check

wheel:
	$(BIN)/python tools/release.py --wheel

release: $(STAMP) release-check
	$(MAKE) clean
	$(MAKE) book
	$(MAKE) student
	$(MAKE) instructor
	$(BIN)/python tools/release.py

# The whole book as one PDF (_build/pdf/normcore.pdf, copied into the site, which links it):
# the single-page build, printed by the browser tests' chromium. `make book` ends with it.
pdf: $(STAMP)
	$(BIN)/python tools/make_pdf.py

# The same as `make book`, but only when a chapter's run, the config or a static file has changed.
# The site also depends on what this machine can add to it: a site built before chromium was
# installed links no PDF, so it is rebuilt once chromium (and playwright) can print one.
site: _build/html/index.html
_build/html/index.html: $(STAMP) $(SITE_INPUTS) _build/.can-print
	$(MAKE) book

CAN_PRINT = $(shell $(BIN)/python -c "import sys; sys.path.insert(0, 'tools'); import chromium; \
	print('yes' if chromium.can_print() else 'no')" 2>/dev/null || echo no)
_build/.can-print: FORCE
	@mkdir -p _build
	@echo "$(CAN_PRINT)" | cmp -s - $@ || echo "$(CAN_PRINT)" > $@

FORCE:

# The student edition and the instructor bundle, when what they are built from changed: the suite
# checks both (no solution in the student's pages; the bundle's pieces).
STUDENT_SITE := _build/student/_build/html/index.html
$(STUDENT_SITE): $(STAMP) $(SITE_INPUTS) _build/.can-print
	$(MAKE) student

_build/instructor/.built: _build/html/index.html
	$(MAKE) instructor
	touch $@

# The one executor: write each chapter's .md into its .ipynb, run it in a fresh kernel, store the
# outputs (what the site renders, the reader downloads, lab/ shows and nbval re-checks); then
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

# Lint: ruff check and ruff format --check over every Python file (pyproject.toml leaves out only
# the notebooks, the vendored and the built files), and mypy over the package's core (pyproject's
# [tool.mypy] says which files). `make format` rewrites what the lint would refuse on style.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The inner loop (README): lint and the unit tests; no site, no notebook, no browser, no claims,
# and not the modules marked slow (long re-runs of experiments and the fuzz; make test runs them).
check: lint
	$(BIN)/python -m pytest -q -n 2 -p no:nbval -m "not notebook and not site and not claims and not slow" \
		--ignore=tests/browser --ignore=tests/claims tests $(call junit,check)

# Every test: lint; the suite (unit, property, notebook: nbval re-executes each chapter and
# compares it with its stored run; browser and site tests, the site re-rendered if stale); and the
# claims suite. `make -k test` (CI) runs each part even when another fails. The suite and the
# claims run under the book's reference arithmetic where this processor has it (REFERENCE_ENV,
# below), as the stored runs were made; where it has none (ARM), under its own, and the claims
# suite then reports a moved count instead of failing on it.
test: lint suite claims

suite: $(STAMP) _build/html/index.html $(STUDENT_SITE) _build/instructor/.built
	env $(REFERENCE_ENV) $(BIN)/python -m pytest -n 2 --dist loadfile --nbval -m "not claims" \
		tests book $(call junit,suite)

# The same notebooks and the numeric tests under several CPU arithmetic settings (BLAS kernels,
# numpy's SIMD loops), with the stored outputs unchanged: `tools/arith_matrix.py --list` says which.
# ARITH_FLAGS=--suite-ran-reference (.ci/run, whose make test runs under the reference
# arithmetic) leaves that configuration to the suite; the slow numeric tests run under the
# reference and the configuration furthest from it (see tools/arith_matrix.py).
ARITH_FLAGS ?=
test-arith: $(STAMP)
	$(BIN)/python tools/arith_matrix.py $(ARITH_FLAGS) $(if $(REPORTS),--summary $(REPORTS)/arith.json)

# The claims suite alone (tests/claims/: each conclusion re-run on fresh seeds; `make test` runs
# it too), and the same storing the frequencies it measures (then `make notebooks`).
# Until a chapter has a claims module, pytest finds nothing to run (exit 5): that passes on a
# developer's machine and fails under CI=true.
# Both run under the book's reference arithmetic (tools/arith_matrix.py --reference-env: the
# AVX2 level, one BLAS thread), as `make notebooks` does: a stored count of seeds on which a
# claim held is then the same on any x86-64 with AVX2. Under other arithmetic a seed that sits
# near a claim's line can fall on the other side (chapter 11 says why).
REFERENCE_ENV = $(shell $(BIN)/python tools/arith_matrix.py --reference-env 2>/dev/null)

claims: $(STAMP)
	env $(REFERENCE_ENV) $(BIN)/python -m pytest -n 2 --dist loadfile -m claims tests/claims \
		$(call junit,claims) \
		|| { rc=$$?; [ $$rc -eq 5 ] && [ "$$CI" != true ] && echo "claims: no claims test yet"; }

claims-record: $(STAMP)
	env $(REFERENCE_ENV) NORMCORE_CLAIMS_WRITE=1 $(BIN)/python -m pytest -n 2 --dist loadfile \
		-m claims tests/claims

# Every chapter with every seed moved (two offsets; any other must pass too), and with only the
# cells a reader sees: tools/fresh_seeds.py.
FRESH_OFFSETS ?= 3 11
fresh-seeds: $(STAMP)
	set -e; for k in $(FRESH_OFFSETS); do $(BIN)/python tools/fresh_seeds.py --offset $$k; done

visible-cells: $(STAMP)
	$(BIN)/python tools/fresh_seeds.py --visible

clean:
	rm -rf _build
