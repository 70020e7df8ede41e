"""Benchmarks. Each module `bench/<name>.py` has a `main()` that prints medians; `python -m bench` runs them all.

Like the tests, benchmarks use the one rule file, config/OlToPurviewMappings.json (`MAPPINGS_PATH` below): in this
process, and through OL_TO_PURVIEW_MAPPINGS_PATH (set here, over whatever the shell says) in the processes they start.
Benchmarks import nothing from tests/.
"""

import os

from olparser.settings import CHECKOUT_MAPPINGS_PATH as MAPPINGS_PATH

os.environ["OL_TO_PURVIEW_MAPPINGS_PATH"] = str(MAPPINGS_PATH)
os.environ.pop("OlToPurviewMappings", None)  # an inline rule list from the shell would win over the file
