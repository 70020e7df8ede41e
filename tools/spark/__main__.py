"""`python -m tools.spark backfill|remap ...` (the same as `ol2purview spark ...`)."""

import sys

from .cli import main

sys.exit(main())
