"""Benchmarks. Each module `bench/<name>.py` has a `main()` that prints medians; `python -m bench` runs them all.

Like the tests, benchmarks use the shipped rules (package data, `MAPPINGS_PATH` below), never
config/OlToPurviewMappings.json, which users edit: `MAPPINGS_PATH` in this process, OL_TO_PURVIEW_MAPPINGS_PATH (set
here) in the processes they start. Benchmarks import nothing from tests/.
"""

import os

from olparser.settings import SHIPPED_MAPPINGS_PATH as MAPPINGS_PATH

os.environ["OL_TO_PURVIEW_MAPPINGS_PATH"] = str(MAPPINGS_PATH)
os.environ.pop("OlToPurviewMappings", None)  # an inline rule list from the shell would win over the file
