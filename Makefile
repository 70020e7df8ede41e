# Every target sets up what it needs by itself: the virtualenv in .venv/, Node tools in node_modules/.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

# docs and docs-reference: the documentation site (mkdocs.yml) and its generated reference pages.
.PHONY: demo docs docs-reference contract-checks run test test-fast coverage bench lint fmt lint-config venv node browser java clean reset package help

help:
	@echo "make run          - serve the function locally (Azurite queue + embedded catalog), prints the Spark settings"
	@echo "make demo         - load sample data into the running \`make run\` (a scanned lake folder, a week of runs, system-table rows)"
	@echo "make test         - run the whole test suite: unit, e2e, spark, browser, azurite, slow (installs what it needs; a process per core)"
	@echo "make test-fast    - unit tests only: tests/unit without the azurite and slow tests"
	@echo "make coverage     - the whole suite under coverage.py: branch coverage of olparser/ and tools/"
	@echo "make bench        - run the benchmarks in bench/ and print medians"
	@echo "make lint         - ruff check, ruff format --check and mypy (strict on olparser/): what CI runs before the tests"
	@echo "make fmt          - rewrite the code as make lint wants it: ruff check --fix, then ruff format"
	@echo "make lint-config  - qn-tester lint on config/OlToPurviewMappings.json, the one rule file"
	@echo "make docs         - build the documentation site into .site/ (mkdocs build --strict)"
	@echo "make docs-reference - rewrite docs/reference/settings.md and cli.md from the code (a test checks them)"
	@echo "make contract-checks - rewrite olparser/contract/lean_checks.py after editing the event contract"
	@echo "make venv         - create .venv/ with the pinned Python dependencies (then: . .venv/bin/activate)"
	@echo "make node         - install Azurite into node_modules/"
	@echo "make browser      - install Debian's chromium for the lineage page test, when missing"
	@echo "make java         - install Debian's openjdk-17-jre-headless for the Spark tests, when missing"
	@echo "make package      - build the Azure deployment zip in dist/ (what .funcignore leaves in)"
	@echo "make reset        - delete the local state in .data/ (queues, run state, catalog) but keep the keys"
	@echo "make clean        - delete .venv/, node_modules/ and .data/"
	@echo "make help         - this list"

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

# serve runs the repository's function_app.py, which chooses the rules in config/; its state goes to .data/ here.
run: venv node
	$(BIN)/ol2purview serve

# In a second terminal while `make run` serves: sample data for every feature, then what to open and try next.
demo: venv
	$(BIN)/ol2purview demo

# OL2PURVIEW_TESTS_STRICT=1: a test that would skip for want of Azurite or Chromium fails instead (as with CI=true).
# The order is random (pytest-randomly); the seed is printed at the top: replay with -p randomly --randomly-seed=N.
# PYTEST_ARGS: more pytest arguments (test and test-fast), e.g. PYTEST_ARGS="-k rules". Where ../shared is missing (a
# clone from GitHub) the tests that need it skip, with one line saying how many; OL2PURVIEW_REQUIRE_SHARED=1 (.ci/run)
# makes its absence an error instead.
# TEST_WORKERS: test processes (pytest-xdist); auto is one per core, at most 4 (each starts its own Azurite when a test
# asks for one; the Spark tests all run in one of them, which keeps the one Spark session). TEST_WORKERS=0: one process.
STRICT := OL2PURVIEW_TESTS_STRICT=1
PYTEST_ARGS ?=
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup

test: venv node browser java
	$(STRICT) $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

# The whole suite under coverage.py: branch coverage of olparser/ and tools/, subprocesses included.
coverage: venv node browser java
	rm -f .coverage .coverage.*
	$(STRICT) $(BIN)/python -m coverage run -m pytest; status=$$?; \
	$(BIN)/python -m coverage combine -q && $(BIN)/python -m coverage report; exit $$status

# Unit tests only: the folder tests/unit, less what needs Azurite or is marked slow (docs/development.md: the tiers).
test-fast: venv
	$(BIN)/python -m pytest $(XDIST) tests/unit -m "not e2e and not browser and not azurite and not spark and not slow" $(PYTEST_ARGS)

bench: venv node java
	$(BIN)/python -m bench

docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --quiet

docs-reference: venv
	$(BIN)/python -m tools.docs

# The code's lint tier (docs/development.md): configuration in pyproject.toml ([tool.ruff], [tool.mypy]).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

lint-config: venv
	$(BIN)/qn-tester lint --config config/OlToPurviewMappings.json

package: venv
	$(BIN)/python deploy/package.py --out dist/ol2purview-function.zip

reset: venv
	@$(BIN)/python -c "import sys; from tools.functions_host.state import RunningHost; \
	  sys.exit('stop ol2purview serve first: it runs on .data' if RunningHost.find('.data') else 0)"
	@if [ -d .data ]; then find .data -mindepth 1 -maxdepth 1 ! -name host-keys.json -exec rm -rf {} +; fi
	@echo "local state in .data/ deleted (keys kept in .data/host-keys.json)"

clean:
	rm -rf $(VENV) node_modules .data .pytest_cache .coverage .coverage.* htmlcov

# The event contract's lean checks are generated code (tests/unit/contract/test_lean_checks.py fails when stale).
contract-checks: venv
	$(BIN)/python -m tools.generate_contract_checks
