"""The guide's `curl` example (docs/guides/run-locally.md) posts an event to a running `serve` as written: the key
read from `.data/host-keys.json`, the event answered 200 and written (issue 43: no `curl` example posted an event,
and history.md's used a `$KEY` it never defined). Only the URL is the test's serve's, as a user copies it from the
banner."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.e2e.lineage_helpers import Atlas
from tests.support.repository import PROJECT_ROOT

GUIDE = PROJECT_ROOT / "docs" / "guides" / "run-locally.md"
HISTORY_GUIDE = PROJECT_ROOT / "docs" / "guides" / "history.md"
KEY_LINE = "KEY=$(python3 -c 'import json; print(json.load(open(\".data/host-keys.json\"))[\"functionKey\"])')"


def curl_block() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    (block,) = [b for b in blocks if "curl" in b and "/api/v1/lineage" in b]
    return block


def test_the_curl_example_posts_an_event_that_is_written(serve_factory, tmp_path: Path):
    serve = serve_factory()
    home = tmp_path / "repository"
    home.mkdir()
    (home / ".data").symlink_to(serve.data_dir)
    script = curl_block().replace("http://127.0.0.1:7071", serve.url)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=home, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runId"] == "0195f0c2-1111-7000-8000-000000000001"
    serve.wait_until_processed()
    keys = Atlas(serve.atlas_url).keys()
    assert (
        "openlineage_process",
        "openlineage://my-jobs/copy_orders/processes/copy_orders/https://contosolake.dfs.core.windows.net/curated/orders",
    ) in keys


def test_every_curl_example_defines_the_key_it_sends():
    for guide in (GUIDE, HISTORY_GUIDE):
        text = guide.read_text(encoding="utf-8")
        for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
            if "$KEY" in block:
                assert KEY_LINE in block.splitlines()[0], (guide.name, block[:200])
