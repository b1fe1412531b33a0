# Two commands do all the set-up on a machine that has only python3:
#   make run    create .venv if missing, install the app, start it
#   make test   the same set-up, then the import contract and the test suite, headless
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint-imports typecheck translations bench package smoke clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/crewagent

lint-imports: $(STAMP)
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# Bytecode caches on, whatever the shell says (PYTHONDONTWRITEBYTECODE=1 made every xdist worker
# and every `python -m crewagent` the tests start compile the app and re-rewrite the test modules:
# about 7 CPU-seconds per worker plus 0.1-0.3 s per process; docs/benchmarks.md, "Test suite").
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE QT_QPA_PLATFORM=offscreen

# A real third-party MCP server for the MCP tests (issue 12), installed with the machine's npm into
# a git-ignored folder; without node/npm (or the registry) those tests skip, and this says so.
MCP_NPM := .mcp-test-servers
MCP_EVERYTHING := @modelcontextprotocol/server-everything@2026.8.31

$(MCP_NPM)/.installed:
	@if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix $(MCP_NPM) $(MCP_EVERYTHING) && touch $@ \
		|| echo "make: npm install $(MCP_EVERYTHING) failed: the server-everything MCP tests will be skipped"; \
	else \
		echo "make: node/npm not found: the server-everything MCP tests will be skipped"; \
	fi

test: $(STAMP) lint-imports typecheck $(MCP_NPM)/.installed
	$(TEST_ENV) $(BIN)/python -m compileall -q desktop tests benchmarks
	$(TEST_ENV) $(BIN)/python -m pytest -n auto --dist loadgroup $(PYTEST_ARGS)

# Regenerate the Chinese catalogue from the sources, then compile it. lupdate gets the files one by
# one: `lupdate desktop/crewagent/ui -extensions py` finds no strings. core/texts.py holds the core's
# texts (context "core"), which the UI translates when it shows them. Fill in the entries left
# type="unfinished" in the .ts, then run this again (tests/ui/test_i18n.py fails on any left).
TS_SOURCES = $(sort $(shell find desktop/crewagent/ui -name '*.py')) desktop/crewagent/core/texts.py
TS_FILE := resources/translations/crewagent_zh_CN.ts

translations: $(STAMP)
	$(BIN)/pyside6-lupdate $(TS_SOURCES) -ts $(TS_FILE) -no-obsolete -locations none
	$(BIN)/pyside6-lrelease $(TS_FILE) -qm $(TS_FILE:.ts=.qm)

$(VENV)/.bench-installed: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

# Every benchmark, one after the other (each also runs alone: .venv/bin/python benchmarks/bench_X.py).
# bench_package.py measures the installer's one-folder app: without a `make package` build it is
# skipped with a line that says so, and the others still run.
bench: $(VENV)/.bench-installed
	set -e; for script in benchmarks/bench_*.py; do echo "== $$script"; \
		if [ "$$script" = benchmarks/bench_package.py ] && [ ! -e dist/crewagent/crewagent ]; then \
			echo "skipped: it measures the packaged app (dist/crewagent), which \`make package\` builds"; continue; \
		fi; \
		QT_QPA_PLATFORM=offscreen $(BIN)/python $$script; done

$(VENV)/.package-installed: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[package]'
	touch $@

# Linux one-folder app, .tar.gz and .deb in dist/ (Windows and macOS build on their own CI runners).
package: $(VENV)/.package-installed
	packaging/build_linux.sh $(BIN)/python

smoke:
	packaging/smoke.sh

clean:
	rm -rf $(VENV) build dist *.egg-info desktop/*.egg-info
