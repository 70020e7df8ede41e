"""The documentation site: README.md is short and points to it; `mkdocs build --strict` passes (also with a page that
is not in `nav` yet); the generated reference pages are what the code generates; and every command block of README
and the site names commands and flags that exist (the Quickstart's blocks are also executed, in
tests/e2e/test_readme.py); the developer page and `make help` keep no test counts or durations (they go stale), and
the timeouts they state are the configured ones."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.docs import cli, settings
from tools.docs.__main__ import PAGES

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DOCS = PROJECT_ROOT / "docs"
README = PROJECT_ROOT / "README.md"
# Programs other than ours that the documentation tells users to run (Azure CLI, Databricks CLI, ...).
OTHER_PROGRAMS = {
    ".",
    "cd",
    "export",
    "echo",
    "cat",
    "ls",
    "git",
    "jq",
    "az",
    "func",
    "databricks",
    "curl",
    "spark-submit",
    "pip",
    "python",
    "python3",
    ".venv/bin/python",
}


def documents() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def command_lines(text: str) -> list[str]:
    """The commands of every ```sh block: continuation lines joined, comments dropped, `NAME=value` prefixes dropped."""
    commands = []
    for block in re.findall(r"^[ \t]*```sh\n(.*?)^[ \t]*```", text, flags=re.S | re.M):
        for line in block.splitlines():
            code = line.split("  #")[0].split(" # ")[0].rstrip()
            if not code.strip() or code.lstrip().startswith("#"):
                continue
            if commands and (commands[-1].endswith("\\") or line.startswith((" ", "\t"))):
                commands[-1] = commands[-1].rstrip("\\") + " " + code.strip()
            else:
                commands.append(code.strip())
    # `NAME=$(command ...)` alone: the command it runs; `NAME=value command ...`: the command
    commands = [re.sub(r"^[A-Z_]+=\$\((.*)\)$", r"\1", c) for c in commands]
    return [re.sub(r"^(?:[A-Z_]+=\S+ )+", "", c) for c in commands]


def parsers() -> dict[tuple[str, ...], object]:
    return {words: parser for words, parser in cli.commands()}


def check(command: str, known: dict, targets: set[str]) -> str | None:
    """What is wrong with one documented command, or None."""
    words = command.split()
    if words[0] == "make":
        unknown = [w for w in words[1:] if w not in targets]
        return f"no make target {unknown}" if unknown else None
    if words[0] in ("ol2purview", "qn-tester"):
        path = (words[0],)
        for word in words[1:]:
            if path + (word,) in known:
                path += (word,)
            elif (
                not word.startswith(("[", "-", "<"))
                and word.isidentifier()
                and word.islower()
                and len(path) == 1
                and words[0] == "ol2purview"
            ):
                return f"`{word}` is not an ol2purview command"
        options = {o for action in known[path]._actions for o in action.option_strings}
        flags = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", command))
        unknown = sorted(flags - options)
        return f"`{' '.join(path)}` has no option {unknown}" if unknown else None
    if words[0] in OTHER_PROGRAMS:
        return None
    return f"`{words[0]}` is neither a command of this project nor a program the documentation names"


def test_every_command_block_names_commands_and_flags_that_exist():
    known = parsers()
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    problems, checked = [], 0
    for path in documents():
        for command in command_lines(path.read_text(encoding="utf-8")):
            checked += 1
            problem = check(command, known, targets)
            if problem:
                problems.append(f"{path.relative_to(PROJECT_ROOT)}: {command[:80]}: {problem}")
    assert problems == []
    assert checked >= 40  # the figure in the report: documented commands checked


def test_a_wrong_flag_or_command_in_a_block_is_found():
    known = parsers()
    assert (
        check("ol2purview serve --port 7071 --no-such-flag", known, set())
        == "`ol2purview serve` has no option ['--no-such-flag']"
    )
    assert check("ol2purview spark backfill ./x --since 2025-03-01", known, set()) is None
    assert check("ol2purview nosuch --x", known, set()) == "`nosuch` is not an ol2purview command"
    assert check("make nosuch", known, {"run"}) == "no make target ['nosuch']"
    assert (
        check("rm -rf /", known, set()) == "`rm` is neither a command of this project nor a program the "
        "documentation names"
    )


def test_the_generated_reference_pages_are_current():
    assert settings.undocumented() == [], "add these settings to tools/docs/settings.py"
    assert settings.unknown() == [], "tools/docs/settings.py documents settings nothing reads"
    for name, make in PAGES.items():
        assert (DOCS / name).read_text(encoding="utf-8") == make(), f"docs/{name} is stale: run `make docs-reference`"


def test_the_cli_page_has_every_command_and_sub_command():
    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert {
        "ol2purview catalog scan",
        "ol2purview spark system-lineage",
        "ol2purview spark backfill",
        "qn-tester lint",
        "ol2purview serve",
    } <= set(headings)
    assert len(headings) == len(set(headings)) == len(cli.commands())


def test_the_settings_page_shows_the_code_defaults():
    rows = {
        line.split(" | ")[0].strip("| `"): line.split(" | ")[1]
        for line in (DOCS / "reference" / "settings.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    }
    assert rows["MAX_DATASETS_PER_RUN`, `MAX_PROCESS_EDGES_PER_RUN"] == "500, 10000"
    assert rows["RUN_HISTORY_DAYS"] == "400"
    assert rows["SQL_PARSE_TIMEOUT_SECONDS"] == "2"
    assert rows["RESOLVE_SCANNED_ASSETS"] == "`true`"


def test_readme_is_short_and_the_project_has_a_license_and_a_changelog():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "make run" in readme and "make test" in readme and "## Quickstart" in readme
    assert (PROJECT_ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    changelog = (PROJECT_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in changelog and "## [Unreleased]" in changelog


def test_the_site_builds_strictly_with_a_page_that_is_not_in_nav(tmp_path):
    """`mkdocs build --strict` as `make docs` runs it, on a copy with one more guide that `nav` does not list yet (as
    another change may add): it builds, and the page is in the site."""
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(PROJECT_ROOT / name, tmp_path / name)
    shutil.copytree(DOCS, tmp_path / "docs")
    (tmp_path / "docs" / "guides" / "not-in-nav-yet.md").write_text(
        "# Not in nav yet\n\nSee [the quickstart](quickstart.md).\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "guides" / "not-in-nav-yet" / "index.html").is_file()
    quickstart = (tmp_path / "site" / "guides" / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert "From a fresh clone, two terminals" in quickstart  # README's Quickstart, included


@pytest.mark.parametrize("page", ["guides/databricks.md", "guides/synapse.md", "guides/fabric.md"])
def test_the_cluster_guides_include_the_spark_settings_from_readme(page):
    assert '--8<-- "README.md:spark-config"' in (DOCS / page).read_text(encoding="utf-8")


# --- issue 43: what a user reads works on a clone from GitHub ---------------------------------------------------------
DEVELOPERS_PAGE = DOCS / "development.md"  # how the tests use ../shared: the one page that names it, on purpose


def test_what_a_user_reads_names_nothing_outside_the_repository():
    """README and the guides pointed at ../shared (the picture's caption, run-locally's replay example,
    enterprise-purview's spec folder) and producers-and-names cited files of it as sources."""
    outside = re.compile(r"\.\./shared|\bshared/|(?:producers-and-estate|purview-and-atlas|purview-scanned-assets)\.md")
    found = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()[:120]}"
        for path in documents()
        if path != DEVELOPERS_PAGE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert found == []


def test_examples_write_their_files_under_the_data_folder():
    """An example that writes a file (`--dry-run`, `--report`, `--out`) writes it under .data/ (ignored by git), not
    into the repository's root as `--dry-run planned.jsonl` did; OUT, DIR and PATH are placeholders."""
    writes = re.compile(r"--(?:dry-run|report|out)[ =]([^\s\]]+)")
    found = [
        f"{path.relative_to(PROJECT_ROOT)}: {target}"
        for path in documents()
        for line in command_lines(path.read_text(encoding="utf-8"))
        for target in writes.findall(line)
        if not target.startswith((".data/", "/"))
        and target not in ("OUT", "DIR", "PATH", "FOLDER")
        and not target.startswith(("$", "<", "[", "abfss://", "dbfs:/"))
    ]
    assert found == []


# What goes stale by itself: how many tests there are and how long they take (pytest prints both: the closing line,
# --durations=N). The developer page and `make help` name neither; the timeouts they state are the configured ones.
STALE = re.compile(
    r"\b(?:minutes?|hours?)\b"
    r"|\btakes?\s+(?:about\s+|up\s+to\s+)?[\d.,]+\s*(?:s|ms|seconds)\b"
    r"|\b\d[\d,]*\s+(?:unit\s+|end-to-end\s+|e2e\s+)?tests\b",
    re.IGNORECASE,
)


def make_help() -> list[str]:
    """The lines `make help` prints (the echo lines of its recipe in the Makefile)."""
    recipe = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8").split("\nhelp:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split("@echo ", 1)[1] for line in recipe.splitlines() if "@echo " in line]


def stale_figures(lines: list[str]) -> list[str]:
    return [line for line in lines if STALE.search(line)]


def test_the_developer_page_and_make_help_keep_no_test_counts_or_durations():
    assert stale_figures(DEVELOPERS_PAGE.read_text(encoding="utf-8").splitlines()) == []
    assert len(make_help()) > 10 and stale_figures(make_help()) == []


@pytest.mark.parametrize(
    "line, stale",
    [
        ("`make test-fast` runs tests/unit (a few minutes of wall clock on a 2-core machine)", True),
        ("the slowest unit test takes 6.4 s", True),
        ("the slow property test takes about 25 s", True),
        ("pytest's closing line says 2,803 tests", True),
        ("every test has a timeout: 120 s", False),
        ("`slow` takes more than a few seconds", False),
        ("BENCH_SPARK_MEMORY_EVENTS=0 for the 120,000-event speed figure only", False),
    ],
)
def test_the_check_finds_counts_and_durations(line, stale):
    assert bool(stale_figures([line])) is stale


def test_the_developer_page_states_the_configured_timeouts():
    import tomllib

    from tests.support.tiers import SLOW_TEST_TIMEOUT

    default = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    text = " ".join(DEVELOPERS_PAGE.read_text(encoding="utf-8").split())
    assert f"Every test has a timeout (pytest-timeout): {default['ini_options']['timeout']} s" in text
    assert f"{SLOW_TEST_TIMEOUT} s for `spark` and `slow` tests (`SLOW_TEST_TIMEOUT`" in text
