"""Benchmarks. Each module `bench/<name>.py` has a `main()` that prints medians; `python -m bench` runs them all.

Like the tests, benchmarks use the tests' copy of the shipped rules (tests/rules), never config/OlToPurviewMappings.json,
which users edit: `tests.rules.MAPPINGS_PATH` in this process, OL_TO_PURVIEW_MAPPINGS_PATH (set here) in the processes
they start; opening the user's file here fails.
"""
from tests import rules

rules.use_the_copy_in_child_processes()
rules.install_guard()
