"""From a merged run (RunSnapshot) to the Atlas entities to write (LineagePlan): pure functions, no I/O."""

from .build import awaits_environment, build_lineage, should_write_lineage
from .fingerprint import plan_fingerprint
from .options import LineageOptions
from .owners import PROCESS_TYPES
from .plan import LineagePlan, UnmatchedDataset

__all__ = [
    "LineageOptions",
    "LineagePlan",
    "PROCESS_TYPES",
    "UnmatchedDataset",
    "awaits_environment",
    "build_lineage",
    "plan_fingerprint",
    "should_write_lineage",
]
