# zcoder — every set-up step lives here, so a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The venv's tools (rg among them) come first, for zcoder and for the tests.
export PATH := $(abspath $(BIN)):$(PATH)
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test lint typecheck unit bench clean fake-ollama screenshots

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

## Start zcoder (pass options with ARGS="--model qwen3-coder")
run: $(STAMP)
	$(BIN)/zcoder $(ARGS)

## The whole test suite: lint, format check, type check, tests
test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## Benchmarks: print tables and rewrite docs/performance.md
bench: $(STAMP)
	$(BIN)/python -m bench

## The fake Ollama server used by the tests, for trying zcoder by hand
fake-ollama: $(STAMP)
	$(BIN)/python -m tests.fixtures.fake_ollama $(ARGS)

## Re-export the README's screenshots from the real app (docs/images/*.svg)
screenshots: $(STAMP)
	$(BIN)/python -m tests.fixtures.screenshots docs/images

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build src/*.egg-info
