"""Entry point for `spark-submit tools/spark/main.py backfill|remap|system-lineage ...` (the package itself comes
from the wheel, given with `--py-files` or installed on the cluster, where tools/ is named `ol2purview_tools`; in the
repository, `tools`)."""

import sys

try:
    # Why the type error is ignored: the wheel's name for tools/, absent from the repository mypy reads
    from ol2purview_tools.spark.cli import main  # type: ignore[import-not-found]
except ImportError:  # the repository's source tree, without the wheel installed
    from tools.spark.cli import main

if __name__ == "__main__":
    sys.exit(main())
