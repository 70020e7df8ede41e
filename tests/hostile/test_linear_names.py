"""Property: tokenising and mapping a name costs work linear in its length, for generated names and rule configs.

A name made of a generated unit repeated to 2,000 and to 16,000 characters is tokenised and mapped (name cache
emptied each time); the work is counted as the lines of olparser/naming that run (sys.settrace: the same count on a
loaded machine, unlike a timer). The longer must cost at most 20x the shorter plus a few lines (linear work gives 8x,
quadratic 64x). The last test shows that the check catches a quadratic name-group scan. What a count of Python lines
cannot see is the work inside a regular expression: that is measured as CPU time per KiB by `bench/hostile.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import olparser.naming
from olparser.naming import MappingEngine
from olparser.naming.tokens import tokenize_name
from tests.support.work_count import lines_run

SHORT, LONG = 2_000, 16_000
MAX_RATIO = 20  # LONG / SHORT is 8: linear cost grows 8x, quadratic 64x
SLACK_LINES = 50
NAMING = str(Path(olparser.naming.__file__).parent)
NAMESPACE = "abfss://c@acct.dfs.core.windows.net"

UNITS = st.text(alphabet="[]./ab-_", min_size=1, max_size=6)
GROUP_TOKENS = st.sampled_from(
    [
        "nameGroups[0]",
        "nameGroups[1]",
        "nameGroups[-1]",
        "nameGroups[0].parts[0]",
        "nameGroups[0].parts[-1]",
        "nameGroups[-1].parts[1]",
    ]
)
COUNT_TOKENS = st.sampled_from(["nameGroups", "nameGroups[0].parts", "nameGroups[-1].parts"])
LITERALS = st.text(alphabet="[]./ab", max_size=4)


@st.composite
def conditions(draw: st.DrawFn) -> dict:
    if draw(st.booleans()):
        return {
            "op1": draw(COUNT_TOKENS),
            "compare": draw(st.sampled_from([">", "<"])),
            "op2": draw(st.integers(0, 50)),
        }
    compare = draw(st.sampled_from(["=", "!=", "contains", "notcontains", "icontains", "startswith", "endswith"]))
    return {"op1": draw(GROUP_TOKENS), "compare": compare, "op2": draw(LITERALS)}


@st.composite
def rules(draw: st.DrawFn) -> list[dict]:
    out = []
    for index in range(draw(st.integers(1, 4))):
        tokens = draw(st.lists(GROUP_TOKENS, min_size=1, max_size=3))
        template = "https://{nameSpcBodyParts[1]}/" + "/".join("{" + token + "}" for token in tokens)
        out.append(
            {
                "name": f"r{index}",
                "parserConditions": [
                    {"op1": "prefix", "compare": "=", "op2": "abfss"},
                    *draw(st.lists(conditions(), max_size=3)),
                ],
                "qualifiedName": template,
                "purviewDataType": "t",
                "normalize": draw(
                    st.lists(
                        st.sampled_from(["lowercaseSchemeHost", "collapseSlashes", "lowercase"]),
                        max_size=3,
                        unique=True,
                    )
                ),
            }
        )
    return out


def _lines_run(fn: Callable[[], object], folder: str = NAMING) -> int:
    """How many lines of the code under `folder` run for `fn()`, name cache emptied first (a count of work)."""
    tokenize_name.cache_clear()
    return lines_run(fn, folder)


def _grows_linearly(
    cost: Callable[[str], object], unit: str, folder: str = NAMING, lengths: tuple[int, int] = (SHORT, LONG)
) -> bool:
    short = (unit * (lengths[0] // len(unit) + 1))[: lengths[0]]
    long = (unit * (lengths[1] // len(unit) + 1))[: lengths[1]]
    return _lines_run(lambda: cost(long), folder) <= MAX_RATIO * _lines_run(lambda: cost(short), folder) + SLACK_LINES


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=UNITS)
def test_tokenising_is_linear_in_the_name_length(unit: str) -> None:
    assert _grows_linearly(tokenize_name, unit)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=UNITS, config=rules())
def test_mapping_is_linear_in_the_name_length(unit: str, config: list[dict]) -> None:
    engine = MappingEngine.from_rules(config)
    assert _grows_linearly(lambda name: engine.map(NAMESPACE, name), unit)


def _groups_scanned_from_every_bracket(name: str) -> list[str]:
    """A quadratic name-group scan, as the old regex `\\[([^\\]]*)\\]` worked on "[[[[...": from every "[",
    forward to the next "]" (to the end when none comes)."""
    groups = []
    for start, char in enumerate(name):
        if char == "[":
            end = start + 1
            while end < len(name) and name[end] != "]":
                end += 1
            if end < len(name):
                groups.append(name[start + 1 : end])
    return groups


def test_the_check_catches_a_quadratic_tokeniser() -> None:
    lengths = (SHORT // 10, LONG // 10)  # the same ratio, fewer lines to trace: quadratic work on 16,000 is 128 M
    assert not _grows_linearly(_groups_scanned_from_every_bracket, "[", __file__, lengths)
    assert _grows_linearly(_groups_scanned_from_every_bracket, "[]", __file__, lengths)  # linear when balanced
