# Every target sets up what it needs by itself: the virtualenv in .venv/, Node tools in node_modules/.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-fast bench lint-config venv node browser java clean help

help:
	@echo "make run    - serve the function locally (Azurite queue + embedded catalog), prints the Spark settings"
	@echo "make test   - run the whole test suite (installs what it needs)"
	@echo "make bench  - run the benchmarks in bench/ and print medians"

$(BIN)/.installed: pyproject.toml requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[local,dev,spark]'
	touch $@

venv: $(BIN)/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: node_modules/.installed

browser:
	@scripts/ensure-chromium.sh

java:
	@scripts/ensure-java.sh

run: venv node
	$(BIN)/ol2purview serve

test: venv node browser java
	$(BIN)/python -m pytest

test-fast: venv
	$(BIN)/python -m pytest -m "not e2e and not browser and not azurite and not spark"

bench: venv node java
	$(BIN)/python -m bench

lint-config: venv
	$(BIN)/qn-tester lint

clean:
	rm -rf $(VENV) node_modules .data .pytest_cache
