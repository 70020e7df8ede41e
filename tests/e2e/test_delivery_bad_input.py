"""Bad input: the hostile corpus (tests/e2e/corpus/hostile.py) mixed into a valid stream, through `ol2purview serve`
in queue mode. Each request gets its exact status and its exact answer (a refusal names the problem, an accepted
event its run and warnings), nothing gets a 5xx, the host stays up, error bodies carry no stack trace or internal path,
and the catalog ends up holding exactly the valid runs (the stream, and the hostile-looking but valid ones): no
refused event leaves anything in it.
"""

from __future__ import annotations

from typing import Iterator

import pytest
import requests

from tests.e2e.corpus.hostile import LANDING, REFUSED, Case
from tools.functions_host.launcher import ServeHandle, start_serve
from tools.samples.delivery import catalog_dump, catalog_mismatches, databricks_run, leaks

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "corpus-function-key-0123456789abcdef"
OTHER_FUNCTION_KEY = "key-of-ingest-batch-only-fedcba9876543210"
FIRST_VALID_RUN = 5000


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    handle = start_serve(
        tmp_path_factory.mktemp("corpus"), key=KEY, extra_args=("--function-key", f"ingest_batch={OTHER_FUNCTION_KEY}")
    )
    yield handle
    assert handle.stop() == 0, handle.output()[-3000:]


def credentials(case: Case, handle: ServeHandle) -> tuple[dict[str, str], dict[str, str]]:
    """(headers, query parameters) carrying the credential the case asks for."""
    key_headers = {
        "function": {"x-functions-key": KEY},
        "master": {"x-functions-key": handle.master_key},
        "wrong": {"x-functions-key": "not-the-key"},
        "truncated": {"x-functions-key": KEY[:-1]},
        "upper": {"x-functions-key": KEY.upper()},
        "bearer": {"Authorization": f"Bearer {KEY}"},
        "other-header": {"x-api-key": KEY},
        "other-function": {"x-functions-key": OTHER_FUNCTION_KEY},
    }
    params = {"query": {"code": KEY}, "empty": {"code": ""}}.get(case.key, {})
    return key_headers.get(case.key, {}), params


def send(handle: ServeHandle, case: Case, body: bytes) -> requests.Response:
    headers, params = credentials(case, handle)
    return requests.request(
        case.method, handle.url + case.route, data=body, params=params, headers={**case.headers, **headers}, timeout=120
    )


def answer_json(response: requests.Response) -> object:
    """The JSON answer, or its text when it is not JSON (which no case expects)."""
    try:
        return response.json()
    except ValueError:
        return response.text[:300]


def valid_stream(count: int) -> Iterator[tuple[int, dict]]:
    """START, COMPLETE, START, COMPLETE... of generated runs from FIRST_VALID_RUN on: (run index, event)."""
    for offset in range(count):
        index = FIRST_VALID_RUN + offset // 2
        yield index, databricks_run(index)[offset % 2]


def test_the_corpus_is_large_and_named_uniquely():
    names = [case.name for case in REFUSED + LANDING]
    assert len(set(names)) == len(names)
    assert len(REFUSED) >= 50
    assert {case.status for case in REFUSED} == {400, 401, 404, 413, 415}


def test_hostile_requests_mixed_into_a_valid_stream(host: ServeHandle):
    cases = REFUSED + LANDING
    stream = valid_stream(2 * len(cases))  # two valid events (one run) after every case
    mismatches: list[str] = []
    valid_runs: set[int] = set()
    for case in cases:
        body = case.body()
        response = send(host, case, body)
        expected = case.expected(body)
        del body  # some are tens of megabytes
        if (response.status_code, answer_json(response)) != (case.status, expected):
            mismatches.append(f"{case.name}: {response.status_code} {response.text[:300]}")
        if case.status in (400, 413, 415) and (
            len(response.content) > 1024 or not response.headers["content-type"].startswith("application/json")
        ):
            mismatches.append(f"{case.name}: not a small JSON error: {response.text[:300]}")
        if leaks(response.text):
            mismatches.append(f"{case.name}: the answer leaks internals: {response.text[:300]}")
        for _ in range(2):
            index, event = next(stream)
            answer = requests.post(
                host.url + "/api/v1/lineage", headers={"x-functions-key": KEY}, json=event, timeout=30
            )
            if answer.status_code != 200:
                mismatches.append(f"valid event after {case.name}: {answer.status_code} {answer.text[:300]}")
            valid_runs.add(index)
        assert host.process.poll() is None, f"the host died after {case.name}:\n{host.output()[-3000:]}"
    assert mismatches == []
    assert requests.get(f"{host.url}/api/health", timeout=5).status_code == 200

    status = host.wait_until_processed(timeout=180)
    queue = status["queues"]["lineage-events"]
    assert (queue["approximateCount"], queue["poisonCount"]) == (0, 0), status
    assert valid_runs == set(range(FIRST_VALID_RUN, FIRST_VALID_RUN + len(cases)))
    landing_runs = {case.run_index for case in LANDING}
    assert len(landing_runs) == len(LANDING) and None not in landing_runs
    outputs = {case.run_index: case.output for case in LANDING if case.output}
    dump = catalog_dump(host.atlas_url)
    assert catalog_mismatches(dump, sorted(valid_runs | landing_runs), outputs) == []
    assert "(status 5" not in host.output(), "a request was answered with a 5xx"
