"""The intake limits, every one documented: what the contract refuses and with which status.

Each limit bounds something that multiplies the work done on an event after it is accepted (by the worker, per
dataset, column or mount), so that intake and worker work stay linear in the event's size with a small constant
(docs/decisions.md, "Cost model"). Each has a setting (olparser.settings, README "Limits"); a refusal names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from olparser.settings import DEFAULT_STRIPPED_FACETS, Settings

# The app setting behind each limit, named in the refusal so that an operator knows what to raise.
SETTING_NAMES = {
    "max_body_bytes": "MAX_EVENT_BYTES",
    "max_string_chars": "MAX_NAME_CHARS",
    "max_datasets_per_event": "MAX_DATASETS_PER_EVENT",
    "max_facets_per_event": "MAX_FACETS_PER_EVENT",
    "max_schema_columns": "MAX_SCHEMA_COLUMNS",
    "max_column_lineage_fields": "MAX_COLUMN_LINEAGE_FIELDS",
    "max_column_lineage_input_fields": "MAX_COLUMN_LINEAGE_INPUT_FIELDS",
    "max_mount_points": "MAX_MOUNT_POINTS",
    "max_gzip_members": "MAX_GZIP_MEMBERS",
    "max_event_time_skew_seconds": "MAX_EVENT_TIME_SKEW_SECONDS",
}


def over_limit(limit_name: str, limit: int) -> str:
    """The end of a refusal message: `more than the limit of 1,000 (setting MAX_DATASETS_PER_EVENT)`."""
    return f"more than the limit of {limit:,} (setting {SETTING_NAMES[limit_name]})"


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
    max_datasets_per_event:  inputs + outputs of one event; more -> 413.
    max_facets_per_event:    facets in all the facet maps of one event (after stripping); more -> 413.
    max_schema_columns:      fields of one `schema` facet, nested fields included; more -> 413.
    max_column_lineage_fields:        output fields of the `columnLineage` facets of one event; more -> 413.
    max_column_lineage_input_fields:  their input fields plus `dataset[]` entries, per event; more -> 413.
    max_mount_points:        entries of the `environment-properties` mountPoints list; more -> 413.
    max_gzip_members:        gzip members in one body (concatenated gzip streams); more -> 400.
    max_event_time_skew_seconds:  an eventTime later than the time the request was received plus this is clamped to
                      that time (with a warning), so a forged future date cannot outrank later real runs.
    """

    max_body_bytes: int = Settings.max_body_bytes
    max_depth: int = 64
    max_string_chars: int = Settings.max_name_chars
    stripped_facets: tuple[str, ...] = DEFAULT_STRIPPED_FACETS
    max_datasets_per_event: int = Settings.max_datasets_per_event
    max_facets_per_event: int = Settings.max_facets_per_event
    max_schema_columns: int = Settings.max_schema_columns
    max_column_lineage_fields: int = Settings.max_column_lineage_fields
    max_column_lineage_input_fields: int = Settings.max_column_lineage_input_fields
    max_mount_points: int = Settings.max_mount_points
    max_gzip_members: int = Settings.max_gzip_members
    max_event_time_skew_seconds: int = Settings.max_event_time_skew_seconds

    @classmethod
    def from_settings(cls, settings: Settings) -> "IntakeLimits":
        return cls(
            max_body_bytes=settings.max_body_bytes,
            max_string_chars=settings.max_name_chars,
            stripped_facets=tuple(settings.stripped_facets),
            max_datasets_per_event=settings.max_datasets_per_event,
            max_facets_per_event=settings.max_facets_per_event,
            max_schema_columns=settings.max_schema_columns,
            max_column_lineage_fields=settings.max_column_lineage_fields,
            max_column_lineage_input_fields=settings.max_column_lineage_input_fields,
            max_mount_points=settings.max_mount_points,
            max_gzip_members=settings.max_gzip_members,
            max_event_time_skew_seconds=settings.max_event_time_skew_seconds,
        )
