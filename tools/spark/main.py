"""Entry point for `spark-submit tools/spark/main.py backfill|remap|system-lineage ...` (the package itself comes
from the wheel, given with `--py-files` or installed on the cluster)."""
import sys

from tools.spark.cli import main

if __name__ == "__main__":
    sys.exit(main())
