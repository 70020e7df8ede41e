"""Property: tokenising and mapping a name costs time linear in its length, for generated names and rule configs.

A name made of a generated unit repeated to 2,000 and to 16,000 characters is tokenised and mapped (name cache
emptied each time); the longer must cost at most 20x the shorter (linear work gives 8x, quadratic 64x: a wide margin
either way on a busy machine), plus a small slack for timer noise. The last test shows that this check catches the old quadratic name-group regex.
"""
from __future__ import annotations

import re
import time
from typing import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.naming import MappingEngine
from olparser.naming.tokens import tokenize_name

SHORT, LONG = 2_000, 16_000
MAX_RATIO = 20  # LONG / SHORT is 8: linear cost grows 8x, quadratic 64x
SLACK_SECONDS = 0.002
NAMESPACE = "abfss://c@acct.dfs.core.windows.net"

UNITS = st.text(alphabet="[]./ab-_", min_size=1, max_size=6)
GROUP_TOKENS = st.sampled_from([
    "nameGroups[0]", "nameGroups[1]", "nameGroups[-1]", "nameGroups[0].parts[0]", "nameGroups[0].parts[-1]",
    "nameGroups[-1].parts[1]",
])
COUNT_TOKENS = st.sampled_from(["nameGroups", "nameGroups[0].parts", "nameGroups[-1].parts"])
LITERALS = st.text(alphabet="[]./ab", max_size=4)


@st.composite
def conditions(draw: st.DrawFn) -> dict:
    if draw(st.booleans()):
        return {"op1": draw(COUNT_TOKENS), "compare": draw(st.sampled_from([">", "<"])), "op2": draw(st.integers(0, 50))}
    compare = draw(st.sampled_from(["=", "!=", "contains", "notcontains", "icontains", "startswith", "endswith"]))
    return {"op1": draw(GROUP_TOKENS), "compare": compare, "op2": draw(LITERALS)}


@st.composite
def rules(draw: st.DrawFn) -> list[dict]:
    out = []
    for index in range(draw(st.integers(1, 4))):
        tokens = draw(st.lists(GROUP_TOKENS, min_size=1, max_size=3))
        template = "https://{nameSpcBodyParts[1]}/" + "/".join("{" + token + "}" for token in tokens)
        out.append({
            "name": f"r{index}",
            "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "abfss"}, *draw(st.lists(conditions(), max_size=3))],
            "qualifiedName": template,
            "purviewDataType": "t",
            "normalize": draw(st.lists(st.sampled_from(["lowercaseSchemeHost", "collapseSlashes", "lowercase"]),
                                       max_size=3, unique=True)),
        })
    return out


def _least_seconds(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        tokenize_name.cache_clear()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _grows_linearly(cost: Callable[[str], object], unit: str, long_repeat: int = 3) -> bool:
    short = (unit * (SHORT // len(unit) + 1))[:SHORT]
    long = (unit * (LONG // len(unit) + 1))[:LONG]
    short_s = _least_seconds(lambda: cost(short))
    long_s = _least_seconds(lambda: cost(long), long_repeat)
    return long_s <= MAX_RATIO * short_s + SLACK_SECONDS


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=UNITS)
def test_tokenising_is_linear_in_the_name_length(unit: str) -> None:
    assert _grows_linearly(tokenize_name, unit)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=UNITS, config=rules())
def test_mapping_is_linear_in_the_name_length(unit: str, config: list[dict]) -> None:
    engine = MappingEngine.from_rules(config)
    assert _grows_linearly(lambda name: engine.map(NAMESPACE, name), unit)


def test_the_check_catches_a_quadratic_tokeniser() -> None:
    old_groups = re.compile(r"\[([^\]]*)\]")  # the name-group regex before #15
    assert not _grows_linearly(old_groups.findall, "[", long_repeat=1)  # noise only ever adds time: one run is enough
