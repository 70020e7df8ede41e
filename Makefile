# Every target sets up what it needs by itself: the virtualenv in .venv/, Node tools in node_modules/.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-fast coverage bench lint-config venv node browser clean help

help:
	@echo "make run    - serve the function locally (Azurite queue + embedded catalog), prints the Spark settings"
	@echo "make test   - run the whole test suite (installs what it needs)"
	@echo "make coverage - the whole suite under coverage.py: branch coverage of olparser/ and tools/"
	@echo "make bench  - run the benchmarks in bench/ and print medians"

$(BIN)/.installed: pyproject.toml requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[local,dev]'
	touch $@

venv: $(BIN)/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: node_modules/.installed

browser:
	@scripts/ensure-chromium.sh

run: venv node
	$(BIN)/ol2purview serve

# OL2PURVIEW_TESTS_STRICT=1: a test that would skip for want of Azurite or Chromium fails instead (as with CI=true).
# The order is random (pytest-randomly); the seed is printed at the top: replay with -p randomly --randomly-seed=N.
STRICT := OL2PURVIEW_TESTS_STRICT=1

test: venv node browser
	$(STRICT) $(BIN)/python -m pytest

# The whole suite under coverage.py: branch coverage of olparser/ and tools/, subprocesses included.
coverage: venv node browser
	rm -f .coverage .coverage.*
	$(STRICT) $(BIN)/python -m coverage run -m pytest; status=$$?; \
	$(BIN)/python -m coverage combine -q && $(BIN)/python -m coverage report; exit $$status

test-fast: venv
	$(BIN)/python -m pytest -m "not e2e and not browser and not azurite"

bench: venv node
	$(BIN)/python -m bench

lint-config: venv
	$(BIN)/qn-tester lint

clean:
	rm -rf $(VENV) node_modules .data .pytest_cache .coverage .coverage.* htmlcov
