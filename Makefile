# The README's two commands: `make book` and `make test`. Each installs what it needs into
# .venv first; the install is skipped while pyproject.toml is unchanged.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A CPU build of torch is installed first so that the package's own `torch` requirement
# does not pull several GB of CUDA wheels; set TORCH_SPEC=torch for a CUDA machine.
TORCH_SPEC ?= torch==2.13.0
# The extras `make book` and `make test` need: the book's toolchain, the tests, Dask.
EXTRAS ?= book,test,cluster
DEPS_HASH := $(shell cat pyproject.toml | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(DEPS_HASH)
BOOKFLAGS ?= -W -n --keep-going
MATHJAX_DIR := _build/.mathjax
# pip compiles no bytecode at install (--no-compile): it would compile every file of
# every package, about 15,000, which took about a minute; the tests and the book import
# about a third of them, and Python compiles and caches each on its first import. For
# that cache to be written, make's commands run without PYTHONDONTWRITEBYTECODE.
PIP := $(BIN)/python -m pip --disable-pip-version-check
PIP_INSTALL := $(PIP) install -q --no-compile
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help install test test-fast lint format book book-clean check-site sync clean

help:
	@echo "make book   build the book into _build/html (installs into $(VENV) first)"
	@echo "make test   run the tests (installs into $(VENV) first)"
	@echo "make check-site  screenshot every built page in headless Chromium and check it"
	@echo "make sync   regenerate the Colab notebooks (book/**/*.ipynb) after make book"

install: $(STAMP)

$(STAMP):
	@echo "== installing into $(VENV) (dependency spec $(DEPS_HASH))"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(PIP_INSTALL) --upgrade pip 2> >(grep -v "^WARNING: Location" >&2)
	@$(PIP_INSTALL) "$(TORCH_SPEC)" 2> >(grep -v "^WARNING: Location" >&2)
	@$(PIP_INSTALL) -e ".[$(EXTRAS)]" 2> >(grep -v "^WARNING: Location" >&2)
	@rm -f $(VENV)/.installed-*
	@touch $@

lint: install
	$(BIN)/ruff check dpnotes tests benchmarks scripts book/_ext
	$(BIN)/ruff format --check dpnotes tests benchmarks scripts book/_ext

format: install
	$(BIN)/ruff format dpnotes tests benchmarks scripts book/_ext
	$(BIN)/ruff check --fix dpnotes tests benchmarks scripts book/_ext

test: install lint
	$(BIN)/python -m pytest -m "not gpu" -q --durations=25 -n auto --dist loadfile

test-fast: install
	$(BIN)/python -m pytest -m "not gpu and not slow" -q

$(MATHJAX_DIR)/mathjax/tex-chtml.js:
	@bash scripts/fetch_mathjax.sh $(MATHJAX_DIR)/mathjax

# The build caches miss new results, package edits and data settings; book_inputs.py
# clears them when any of those changed since the last build. execute_book.py runs the
# chapters on every core into the execution cache, which the build then reads.
book: install $(MATHJAX_DIR)/mathjax/tex-chtml.js
	$(BIN)/python scripts/book_inputs.py
	$(BIN)/python scripts/execute_book.py
	$(BIN)/jupyter-book build . $(BOOKFLAGS)
	$(BIN)/python scripts/colab.py check --build _build
	@echo "The book is built: open $(CURDIR)/_build/html/index.html"

book-clean:
	rm -rf _build/html _build/jupyter_execute _build/.doctrees _build/.jupyter_cache \
		_build/.book-inputs

check-site: install
	$(BIN)/python scripts/check_site.py _build/html --out _build/screenshots --install

# The Colab notebooks (book/**/*.ipynb) are generated from the chapters and the numbers
# the last build showed: build first.
sync: install
	$(BIN)/python scripts/colab.py sync --build _build

clean:
	rm -rf _build .pytest_cache .ruff_cache
