"""The intake limits, every one documented: what the contract refuses and with which status."""
from __future__ import annotations

from dataclasses import dataclass

from olparser.settings import DEFAULT_STRIPPED_FACETS, Settings


@dataclass(frozen=True)
class IntakeLimits:
    """Limits applied to every request before an event is accepted.

    max_body_bytes:   the body size after gzip decompression; larger -> 413. Decompression stops as soon as the
                      output passes it, so a gzip bomb is never expanded.
    max_depth:        JSON nesting depth (the event object is depth 1) after heavy facets are stripped; deeper -> 400.
                      Bodies nested beyond what the JSON parser can recurse (about 1,000) are refused as a whole.
    max_string_chars: the longest namespace / name accepted (job, datasets, symlink identifiers, column-lineage
                      inputs, parent job); longer -> 400 for core fields, the facet dropped for facet fields.
                      Other strings (SQL text, descriptions) are bounded only by max_body_bytes.
    stripped_facets:  facet names removed wherever facets live (run, job, dataset, input and output facets) before
                      validation: heavy facets the connector never reads.
    """

    max_body_bytes: int = 32 * 1024 * 1024
    max_depth: int = 64
    max_string_chars: int = 4096
    stripped_facets: tuple[str, ...] = DEFAULT_STRIPPED_FACETS

    @classmethod
    def from_settings(cls, settings: Settings) -> "IntakeLimits":
        return cls(max_body_bytes=settings.max_body_bytes, stripped_facets=tuple(settings.stripped_facets))
