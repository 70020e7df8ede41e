"""qn-tester, run as a real process: output lines and exit codes (0 matched, 3 unmatched, 2 usage/config, 1 lint)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import requests
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from olparser.settings import PROJECT_ROOT
from tests.support.qn_tester_runs import COMMAND, RULES_LINE, after_rules_line, qn_tester
from tests.support.rules import MAPPINGS_PATH, rule

# the engine says why no shipped rule names a Kafka topic (olparser/naming/stores.py)
KAFKA = (
    "; Kafka (also Event Hubs' Kafka endpoint): no Purview scanner registers it, so it stays a placeholder "
    "(see docs/guides/producers-and-names.md)"
)
SQL_NS = "sqlserver://purviewadbsynapsews.sql.azuresynapse.net:1433;database=SQLPool1;"


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_one_shot_match_prints_the_json_line_and_exits_0():
    done = qn_tester("--namespace", SQL_NS, "--name", "sales.region")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        '{"QualifiedName": "mssql://purviewadbsynapsews.sql.azuresynapse.net/SQLPool1/sales/region", '
        '"PurviewType": "azure_synapse_dedicated_sql_table"}\n'
    )


def test_no_match_prints_the_placeholder_the_connector_writes_with_the_error_and_exits_3():
    done = qn_tester("--namespace", "kafka://broker:9092", "--name", "topic")
    assert done.returncode == 3
    assert json_lines(done.stdout) == [
        {
            "QualifiedName": "kafka://broker:9092/topic",
            "PurviewType": "openlineage_dataset",
            "error": "no mapping rule matched (namespace prefix 'kafka', 55 rules tried)" + KAFKA,
        }
    ]


def test_mounts_and_workspace_url_options(vectors_dir):
    mounts = str(vectors_dir / "mount_points.json")
    done = qn_tester("--namespace", "dbfs", "--name", "/mnt/x2/y/abc", "--mounts", mounts)
    assert json_lines(done.stdout)[0]["QualifiedName"] == "https://ysa.dfs.core.windows.net/myx2/subdir/y/abc"
    done = qn_tester(
        "--namespace", "dbfs", "--name", "/user/hive/warehouse/t", "--workspace-url", "adb-1.2.azuredatabricks.net"
    )
    assert json_lines(done.stdout) == [
        {"QualifiedName": "default.t@adb-1.2.azuredatabricks.net", "PurviewType": "hive_table"}
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--namespace", "x://y"], "--namespace and --name go together"),
        (["--namespace", "x", "--name", "y", "--batch", "f"], "choose one of --namespace/--name, --batch"),
        (["--explain"], "--explain needs --namespace and --name"),
        (
            ["--mounts", "/nonexistent.json", "--namespace", "a", "--name", "b"],
            "cannot read mounts file /nonexistent.json",
        ),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2_and_name_the_problem(args, message):
    done = qn_tester(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_config_errors_exit_2_and_name_rule_and_field(tmp_path: Path):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps([rule("ok", [], "x"), rule("broken", [("prefix", "=", "x")], "x://{nameGroupz[0]}")]))
    done = qn_tester("--config", str(config), "--namespace", "x://y", "--name", "z")
    assert done.returncode == 2
    assert done.stderr == (
        "qn-tester: config error: rule 1 'broken', field qualifiedName: placeholder at position 4: unknown token "
        "'nameGroupz' (known: prefix, nameSpcBodyParts, nameSpcConParts, nameSpcNameVals, nameGroups, "
        "nameSpaceBodyJoinedBySlashFrom, AdbWorkspaceUrl)\n"
    )


def test_inline_app_setting_is_used_without_config(tmp_path: Path):
    inline = json.dumps({"OlToPurviewMappings": [rule("inline", [], "inline://{prefix}", "custom")]})
    done = qn_tester("--namespace", "kafka://b", "--name", "t", env={"OlToPurviewMappings": inline})
    assert json_lines(done.stdout) == [{"QualifiedName": "inline://kafka", "PurviewType": "custom"}]


def test_explain_full_lists_tokens_every_rule_and_the_winner():
    done = qn_tester("--namespace", SQL_NS, "--name", "exampleinputA", "--explain", "--full")
    assert done.returncode == 0
    out = done.stdout
    assert "  nameSpcNameVals = {'database': 'SQLPool1'}\n" in out
    assert (
        "  [0] adlsGen2BlobHostSubfolder: no - condition failed: prefix = ['abfss', 'abfs'] (prefix is 'sqlserver')\n"
        in out
    )
    assert "  [15] synapseSqlBracketSchema: no - condition failed: nameGroups > 1 (nameGroups is 1)\n" in out
    assert out.endswith(
        "winner: synapseSqlDbo -> mssql://purviewadbsynapsews.sql.azuresynapse.net/SQLPool1/dbo/exampleinputA "
        "(azure_synapse_dedicated_sql_table)\n"
        "written as: azure_synapse_dedicated_sql_table mssql://purviewadbsynapsews.sql.azuresynapse.net/SQLPool1/dbo/"
        "exampleinputA\n"
        "candidates (the first the catalog holds is the asset the lineage links to):\n"
        "  1. exact  azure_synapse_dedicated_sql_table mssql://purviewadbsynapsews.sql.azuresynapse.net/SQLPool1/dbo/"
        "exampleinputA  (rule identity)\n"
    )


def test_explain_of_no_match_exits_3():
    done = qn_tester("--namespace", "kafka://b:9092", "--name", "t", "--explain", "--full")
    assert done.returncode == 3
    assert done.stdout.endswith(
        "winner: none - no mapping rule matched (namespace prefix 'kafka', 55 rules tried)" + KAFKA + "\n"
        "written as: openlineage_dataset kafka://b:9092/t\n"
        "candidates (the first the catalog holds is the asset the lineage links to):\n"
        "  none: no scanner registers this dataset under another name\n"
    )


def explained_rules(done: subprocess.CompletedProcess) -> list[str]:
    """The lines of an --explain summary from its "rules:" line on."""
    return done.stdout.split("rules:", 1)[1].splitlines()


def test_explain_summarises_the_rules_the_namespace_did_not_rule_out(tmp_path: Path):
    config = tmp_path / "m.json"
    config.write_text(
        json.dumps(
            [
                rule(
                    "blob",
                    [("prefix", "=", "wasbs")],
                    "https://{nameSpcBodyParts[0]}/{nameGroups[0]}",
                    "azure_blob_path",
                ),
                rule(
                    "sqlSchema", [("prefix", "=", "sqlserver"), ("nameGroups", ">", 1)], "mssql://{nameGroups[1]}", "t1"
                ),
                rule(
                    "sqlDbo", [("prefix", "=", "sqlserver")], "mssql://{nameSpcBodyParts[0]}/dbo/{nameGroups[0]}", "t2"
                ),
            ]
        )
    )
    done = qn_tester("--config", str(config), "--namespace", "sqlserver://h:1433", "--name", "sales", "--explain")
    assert done.returncode == 0
    assert explained_rules(done) == [
        " 3 tried",
        "  1 ruled out by a namespace condition",
        "  [1] sqlSchema: condition failed: nameGroups > 1 (nameGroups is 1)",
        "winner: sqlDbo -> mssql://h/dbo/sales (t2)",
        "(--explain --full lists every rule and condition)",
        "written as: t2 mssql://h/dbo/sales",
        "candidates (the first the catalog holds is the asset the lineage links to):",
        "  1. exact  t2 mssql://h/dbo/sales  (rule identity)",
    ]


def test_explain_of_no_match_is_a_page_not_every_rule():
    done = qn_tester("--namespace", "kafka://b:9092", "--name", "t", "--explain")
    assert done.returncode == 3
    assert explained_rules(done) == [
        " 55 tried",
        "  55 ruled out by a namespace condition",
        "winner: none - no mapping rule matched (namespace prefix 'kafka', 55 rules tried)" + KAFKA,
        "(--explain --full lists every rule and condition)",
        "written as: openlineage_dataset kafka://b:9092/t",
        "candidates (the first the catalog holds is the asset the lineage links to):",
        "  none: no scanner registers this dataset under another name",
    ]
    assert len(done.stdout.splitlines()) < 25


def test_a_mount_path_without_mount_points_and_a_jdbc_namespace_get_a_hint():
    done = qn_tester("--namespace", "dbfs", "--name", "/mnt/raw/sales")
    assert after_rules_line(done.stderr) == [
        'hint: /mnt/... is a Databricks mount point: pass --mounts FILE (a JSON list of {"mountPoint", "source"}, '
        "as in the run's environment-properties facet) or --event FILE, so that it maps like the storage path it "
        "mounts"
    ]
    done = qn_tester("--namespace", "jdbc:sqlserver://h:1433;database=db", "--name", "dbo.t")
    assert after_rules_line(done.stderr) == [
        "hint: OpenLineage namespaces have no 'jdbc:' prefix (Spark sends 'sqlserver://h:1433;database=db', not "
        "'jdbc:sqlserver://h:1433;database=db'): try --namespace 'sqlserver://h:1433;database=db'"
    ]
    assert qn_tester("--namespace", "abfss://c@a.dfs.core.windows.net", "--name", "/x").stderr == RULES_LINE + "\n"


def test_an_empty_namespace_is_refused_instead_of_running_every_rule():
    done = qn_tester("--namespace", "", "--name", "x")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "qn-tester: error: --namespace is empty (an OpenLineage namespace such as abfss://raw@lake.dfs.core.windows.net)"
    )
    done = qn_tester(stdin="\nabfss://c@a.dfs.core.windows.net\n/x\n")
    assert done.returncode == 0
    assert after_rules_line(done.stderr) == [
        "qn-tester: the namespace is empty: type one (e.g. abfss://raw@lake.dfs.core.windows.net), or Ctrl-D to quit"
    ]
    assert json_lines(done.stdout) == [
        {"QualifiedName": "https://a.dfs.core.windows.net/c/x", "PurviewType": "azure_datalake_gen2_path"}
    ]


def _at_a_terminal(typed: list[bytes]) -> tuple[int, bytes]:
    """qn-tester on a pseudo-terminal: each of `typed` is written after the next `nameSpace: ` / `name: ` prompt,
    then Ctrl-D; its exit code and everything it showed."""
    import pty
    import select

    main, terminal = pty.openpty()
    process = subprocess.Popen(
        COMMAND, stdin=terminal, stdout=terminal, stderr=terminal, cwd=PROJECT_ROOT, close_fds=True
    )
    os.close(terminal)
    seen = b""
    try:
        for answer in [*typed, b"\x04"]:  # Ctrl-D: end of input on a terminal
            while not seen.endswith((b"nameSpace: ", b"name: ")):
                ready, _, _ = select.select([main], [], [], 30)
                assert ready, f"no prompt within 30 s: {seen!r}"
                seen += os.read(main, 1024)
            os.write(main, answer)
            seen += b"|"  # the next prompt is a new one
        return process.wait(timeout=10), seen
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)


def test_ctrl_d_at_the_first_prompt_of_a_terminal_quits():
    assert _at_a_terminal([])[0] == 0


def test_ctrl_d_after_a_miss_at_a_terminal_exits_0_having_shown_the_miss():
    code, seen = _at_a_terminal([b"kafka://broker:9092\n", b"topic\n"])
    assert code == 0
    assert (
        '"error": "no mapping rule matched (namespace prefix \'kafka\', 55 rules tried)' + KAFKA + '"'
    ).encode() in seen


@pytest.fixture
def embedded_catalog(tmp_path: Path):
    from tools.catalog import CatalogServer

    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    yield server
    server.stop()


def test_lint_against_a_catalog_reports_the_rules_whose_type_it_does_not_know(tmp_path: Path, embedded_catalog):
    config = tmp_path / "m.json"
    config.write_text(
        json.dumps(
            [
                rule(
                    "lake",
                    [("prefix", "=", "abfss")],
                    "https://{nameSpcBodyParts[0]}/{nameGroups[0]}",
                    "azure_datalake_gen2_path",
                ),
                rule(
                    "kafka",
                    [("prefix", "=", "kafka")],
                    "kafka://{nameSpcBodyParts[0]}/{nameGroups[0]}",
                    "kafka_topic_made_up",
                ),
                rule("placeholder", [("prefix", "=", "x")], "x://{nameGroups[0]}", "openlineage_dataset"),
            ]
        )
    )
    done = qn_tester("lint", "--config", str(config), "--catalog", embedded_catalog.url)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        f"[type] rule 1 'kafka': purviewDataType 'kafka_topic_made_up' is not an entity type of the catalog at "
        f"{embedded_catalog.atlas_url} (nor one the connector registers): every run it maps would be rejected "
        "(ATLAS-400-00-014)",
        f"{config}: 1 problem(s)",
    ]
    known = tmp_path / "known.json"
    known.write_text(json.dumps([json.loads(config.read_text())[i] for i in (0, 2)]))
    done = qn_tester("lint", "--config", str(known), "--catalog", embedded_catalog.atlas_url)
    assert (done.returncode, done.stdout) == (0, f"{known}: no problems found\n")
    done = qn_tester("lint", "--config", str(config), "--atlas-url", embedded_catalog.url)  # every tool's flag
    assert (done.returncode, done.stdout.splitlines()[-1]) == (1, f"{config}: 1 problem(s)")


LAKE = "https://acct.dfs.core.windows.net/silver"
CANDIDATE_LINES = [
    "candidates (the first the catalog holds is the asset the lineage links to):",
    f"  1. exact  azure_datalake_gen2_path {LAKE}/sales  (rule identity)",
    f"  2. exact  azure_datalake_gen2_resource_set {LAKE}/sales/{{SparkPartitions}}  (resource set)",
    f"  3. search azure_datalake_gen2_resource_set {LAKE}/sales[/k={{k}}]+/{{SparkPartitions}}  "
    "(partitioned resource set (search))",
]


def test_explain_lists_the_candidates_in_the_order_they_are_tried():
    done = qn_tester("--namespace", "abfss://silver@acct.dfs.core.windows.net", "--name", "sales", "--explain")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-5:] == [
        *CANDIDATE_LINES,
        "not asked: 1 search(es), no catalog: --catalog [URL] checks them",
    ]


# naming spec (OpenLineage website/docs/spec/naming.md, commit 8f02abfb) L34: `oracle://{host}:{port}` +
# `{serviceName}.{schema}.{table}`
ORACLE_LINE = (
    "  1. search assetType Oracle …//ora.example.com…ORCL…SALES…ORDERS  "
    "(Oracle scan (search: assetType Oracle, the dataset's parts in order))"
)


def explain_oracle(*more: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return qn_tester(
        "--namespace", "oracle://ora.example.com:1521", "--name", "ORCL.SALES.ORDERS", "--explain", *more, env=env
    )


def test_explain_of_a_store_found_by_search_says_the_search_was_not_asked_and_why():
    done = explain_oracle()
    assert done.returncode == 3  # a placeholder until linked
    assert done.stdout.splitlines()[-4:] == [
        "written as: openlineage_dataset oracle://ora.example.com:1521/ORCL.SALES.ORDERS",
        "candidates (the first the catalog holds is the asset the lineage links to):",
        ORACLE_LINE,
        "not asked: 1 search(es), no catalog: --catalog [URL] checks them",
    ]
    done = explain_oracle("--catalog", "http://127.0.0.1:9/api/atlas/v2", env={"RESOLVE_SCANNED_ASSETS": "false"})
    assert done.stdout.splitlines()[-1] == (
        "not asked: 1 search(es), resolution is off (RESOLVE_SCANNED_ASSETS=false): the connector links nothing"
    )


def test_explain_of_a_store_found_by_search_says_no_hit_several_hits_or_the_one_it_links(embedded_catalog):
    from tests.support.searched_stores import register_assets, register_store_types

    register_store_types(embedded_catalog.atlas_url)
    register_assets(embedded_catalog.atlas_url, ("oracle_table", "oracle://ora.example.com:1521/ORCL/SALES/ORDERS_OLD"))
    done = explain_oracle("--catalog", embedded_catalog.url)
    assert done.stdout.splitlines()[-2:] == [
        ORACLE_LINE + "  [no hit of that shape]",
        f"nothing found in {embedded_catalog.atlas_url}: written as openlineage_dataset "
        "oracle://ora.example.com:1521/ORCL.SALES.ORDERS; the re-link timer looks again later",
    ]
    first, second = "oracle://ora.example.com:1521/ORCL/SALES/ORDERS", "oracle://ora.example.com/orcl.sales.orders"
    register_assets(embedded_catalog.atlas_url, ("oracle_table", first), ("oracle_table", second))
    done = explain_oracle("--catalog", embedded_catalog.url)
    assert done.stdout.splitlines()[-2] == (
        ORACLE_LINE + f"  [2 hits of that shape, ambiguous, nothing linked: {second}, {first}]"  # sorted
    )
    requests.delete(
        f"{embedded_catalog.atlas_url}/entity/uniqueAttribute/type/oracle_table",
        params={"attr:qualifiedName": second},
        timeout=10,
    ).raise_for_status()
    done = explain_oracle("--catalog", embedded_catalog.url)
    assert done.stdout.splitlines()[-2:] == [
        ORACLE_LINE + f"  [found {first}]",
        f"linked in {embedded_catalog.atlas_url}: oracle_table {first}",
    ]


def test_explain_with_a_catalog_says_which_candidate_exists_and_which_one_is_linked(embedded_catalog):
    import requests

    partitioned = f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}"
    requests.post(
        f"{embedded_catalog.atlas_url}/entity/bulk",
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_datalake_gen2_resource_set",
                    "guid": "-1",
                    "attributes": {"qualifiedName": partitioned, "name": "sales"},
                }
            ]
        },
    ).raise_for_status()
    done = qn_tester(
        "--namespace",
        "abfss://silver@acct.dfs.core.windows.net",
        "--name",
        "sales",
        "--explain",
        "--catalog",
        embedded_catalog.url,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-5:] == [
        CANDIDATE_LINES[0],
        CANDIDATE_LINES[1] + "  [missing]",
        CANDIDATE_LINES[2] + "  [missing]",
        CANDIDATE_LINES[3] + f"  [found {partitioned}]",
        f"linked in {embedded_catalog.atlas_url}: azure_datalake_gen2_resource_set {partitioned}",
    ]


def test_explain_of_a_unity_catalog_table_with_its_metastore_is_one_exact_name():
    done = qn_tester(
        "--namespace",
        "unity-catalog",
        "--name",
        "Main.Sales.Orders",
        "--explain",
        "--metastore",
        "0a1b2c3d-0000-4000-8000-00000000abcd",
    )
    assert done.stdout.splitlines()[-2:] == [
        "candidates (the first the catalog holds is the asset the lineage links to):",
        "  1. exact  databricks_table databricks://0a1b2c3d-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/"
        "tables/orders  (rule identity)",
    ]


@pytest.mark.parametrize(
    "namespace",
    [
        # dbt-ol processor.py extract_namespace, Adapter.DATABRICKS: f"databricks://{profile['host']}"
        "databricks://adb-5550001112223334.4.azuredatabricks.net",
        # naming.md Unity Catalog row: `unitycatalog://{host}:{port}`
        "unitycatalog://adb-5550001112223334.4.azuredatabricks.net:443",
    ],
)
def test_explain_of_a_unity_catalog_host_namespace_with_its_metastore_is_one_exact_name(namespace):
    done = qn_tester(
        "--namespace",
        namespace,
        "--name",
        "main.sales.orders",
        "--explain",
        "--metastore",
        "0a1b2c3d-0000-4000-8000-00000000abcd",
    )
    assert done.stdout.splitlines()[-2:] == [
        "candidates (the first the catalog holds is the asset the lineage links to):",
        "  1. exact  databricks_table databricks://0a1b2c3d-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/"
        "tables/orders  (rule identity)",
    ]
    assert after_rules_line(done.stderr) == []  # the metastore was given: no hint to give one


def test_catalog_when_no_catalog_is_configured_or_running_is_a_usage_error_naming_the_ways_to_give_one(tmp_path):
    done = qn_tester(
        "--namespace",
        "abfss://silver@acct.dfs.core.windows.net",
        "--name",
        "sales",
        "--catalog",
        "--data",
        str(tmp_path),
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == (
        "qn-tester: error: no catalog: pass --atlas-url URL, set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or "
        f"ATLAS_ENDPOINT, or start `ol2purview serve` (none runs on {tmp_path}; --data DIR names another data folder)"
    )


def test_lint_against_a_catalog_that_cannot_be_reached_exits_2(tmp_path: Path):
    from tests.support.ports import free_port

    url = f"http://127.0.0.1:{free_port()}/api/atlas/v2"
    done = qn_tester("lint", "--catalog", url)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith(f"qn-tester: error: cannot read the type names from {url}: ")
    assert "Traceback" not in done.stderr


def test_batch_over_the_reference_vectors(tmp_path: Path, vectors_dir):
    doc_rule = json.loads((vectors_dir / "doc_rule_test.json").read_text())["rule"]
    config = tmp_path / "with_doc_rule.json"
    config.write_text(json.dumps([doc_rule, *json.loads(MAPPINGS_PATH.read_text())]))
    cases = json.loads((vectors_dir / "qn_cases.json").read_text())["cases"]
    done = qn_tester(
        "--config",
        str(config),
        "--batch",
        str(vectors_dir / "qn_cases.json"),
        "--mounts",
        str(vectors_dir / "mount_points.json"),
    )
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    assert [(x["namespace"], x["name"], x["QualifiedName"], x["PurviewType"]) for x in lines] == [
        (c["namespace"], c["name"], c["qualifiedName"], c["purviewType"]) for c in cases
    ]
    assert lines[0]["Rule"] == "blob" and lines[28]["Rule"] == "test"


def test_batch_json_lines_from_stdin_exit_3_when_one_is_unmatched():
    stdin = (
        '{"namespace": "wasbs://c@a.blob.core.windows.net", "name": "k"}\n\n{"namespace": "kafka://b", "name": "t"}\n'
    )
    done = qn_tester("--batch", "-", stdin=stdin)
    assert done.returncode == 3
    first, second = json_lines(done.stdout)
    assert first == {
        "namespace": "wasbs://c@a.blob.core.windows.net",
        "name": "k",
        "QualifiedName": "https://a.blob.core.windows.net/c/k",
        "PurviewType": "azure_blob_path",
        "Rule": "blob",
    }
    assert (second["QualifiedName"], second["PurviewType"], second["Rule"]) == (
        "kafka://b/t",
        "openlineage_dataset",
        None,
    )


def test_batch_with_a_bad_line_exits_2_naming_the_line():
    done = qn_tester("--batch", "-", stdin='{"namespace": "a", "name": "b"}\n{"namespace": 1}\n')
    assert done.returncode == 2
    assert "line 2: expected an object with string 'namespace' and 'name'" in done.stderr


def test_event_maps_inputs_and_outputs_with_the_event_mount_points(tmp_path: Path):
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime="2026-01-01T00:00:00Z",
        producer="https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="adb-1.2.azuredatabricks.net", name="nb.write"),
        inputs=[InputDataset(namespace="dbfs", name="/mnt/raw/sales.parquet")],
        outputs=[OutputDataset(namespace="sqlserver://srv.database.windows.net:1433", name="dw.dbo.sales")],
    )
    body = json.loads(Serde.to_json(event))
    body["run"]["facets"] = {
        "environment-properties": {
            "_producer": "p",
            "_schemaURL": "s",
            "environment-properties": {
                "mountPoints": [{"mountPoint": "/mnt/raw", "source": "abfss://raw@lake.dfs.core.windows.net/"}]
            },
        }
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(body))
    done = qn_tester("--event", str(path))
    assert done.returncode == 0, done.stderr
    assert [(x["direction"], x["QualifiedName"], x["PurviewType"]) for x in json_lines(done.stdout)] == [
        ("input", "https://lake.dfs.core.windows.net/raw/sales.parquet", "azure_datalake_gen2_path"),
        ("output", "mssql://srv.database.windows.net/dw/dbo/sales", "azure_sql_table"),
    ]


def test_prompt_mode_reads_namespace_and_name_pairs_until_end_of_input():
    done = qn_tester(stdin="abfss://c@a.dfs.core.windows.net\n/x\nkafka://b\nt\n")
    assert done.returncode == 3
    assert json_lines(done.stdout) == [
        {"QualifiedName": "https://a.dfs.core.windows.net/c/x", "PurviewType": "azure_datalake_gen2_path"},
        {
            "QualifiedName": "kafka://b/t",
            "PurviewType": "openlineage_dataset",
            "error": "no mapping rule matched (namespace prefix 'kafka', 55 rules tried)" + KAFKA,
        },
    ]


def test_lint_without_config_lints_the_rule_file_of_the_settings_which_is_clean():
    done = qn_tester("lint")  # OL_TO_PURVIEW_MAPPINGS_PATH: the one rule file, shown as a checkout names it
    assert (done.returncode, done.stdout) == (0, "config/OlToPurviewMappings.json: no problems found\n")


def test_lint_reports_findings_and_exits_1(tmp_path: Path):
    config = tmp_path / "m.json"
    config.write_text(
        json.dumps(
            [
                rule("sql", [("prefix", "=", "sqlserver")], "mssql://{nameSpcBodyParts[0]}/{nameGroups[0]}"),
                rule(
                    "sqlNonDbo",
                    [("prefix", "=", "sqlserver"), ("nameGroups", ">", 1)],
                    "mssql://{nameSpcBodyParts[0]}/{nameGroups[1]}",
                ),
                rule("sql", [("nameSpcBodyPart[0]", "=", "x")], "y"),
            ]
        )
    )
    done = qn_tester("lint", "--config", str(config))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "[token] rule 2 'sql', field parserConditions[0].op1: unknown token 'nameSpcBodyPart' (known: prefix, nameSpcBodyParts, "
        "nameSpcConParts, nameSpcNameVals, nameGroups, nameSpaceBodyJoinedBySlashFrom, AdbWorkspaceUrl)",
        "[duplicate-name] rule 2 'sql', field name: the name is already used by rule 0",
        "[shadowed] rule 1 'sqlNonDbo': can never match: rule 0 'sql' always matches first",
        f"{config}: 3 problem(s)",
    ]


def test_lint_of_invalid_json_exits_2(tmp_path: Path):
    config = tmp_path / "m.json"
    config.write_text("[")
    done = qn_tester("lint", "--config", str(config))
    assert done.returncode == 2
    assert "is not valid JSON" in done.stderr


def test_lint_reports_every_schema_error_and_still_checks_the_other_rules(tmp_path: Path):
    config = tmp_path / "m.json"
    good = rule("ok", [("prefix", "=", "abfss")], "https://{nameSpcBodyParts[0]}/{nameGroups[0]}")
    config.write_text(
        json.dumps(
            [
                {**good, "name": "extra", "bogus": 1, "other": 2},
                {
                    "name": "partial",
                    "parserConditions": [{"op1": "prefix", "compare": "==", "op2": "x"}],
                    "qualifiedName": "q",
                },
                {
                    **good,
                    "name": "typo",
                    "parserConditions": [{"op1": "nameSpcBodyPart[0]", "compare": "=", "op2": "x"}],
                },
            ]
        )
    )
    done = qn_tester("lint", "--config", str(config))
    assert done.returncode == 1
    allowed = (
        "unknown field (allowed: name, description, parserConditions, qualifiedName, purviewDataType, "
        "purviewPrefix, normalize; fields starting with '_' are comments)"
    )
    assert done.stdout.splitlines() == [
        f"[schema] rule 0 'extra', field bogus: {allowed}",
        f"[schema] rule 0 'extra', field other: {allowed}",
        "[schema] rule 1 'partial': 'purviewDataType' is a required property",
        "[schema] rule 1 'partial', field parserConditions[0].compare: '==' is not one of ['=', '!=', 'contains', "
        "'notcontains', 'icontains', 'startswith', 'endswith', 'contains-in', '>', '<']",
        "[token] rule 2 'typo', field parserConditions[0].op1: unknown token 'nameSpcBodyPart' (known: prefix, "
        "nameSpcBodyParts, nameSpcConParts, nameSpcNameVals, nameGroups, nameSpaceBodyJoinedBySlashFrom, "
        "AdbWorkspaceUrl)",
        f"{config}: 5 problem(s)",
    ]


def test_event_names_each_dataset_as_the_catalog_gets_it_and_the_other_identity_as_also():
    """The compat-tests CLL run: Hive tables with a `symlinks` TABLE identifier; no rule maps either identity, so the
    table (DATASET_IDENTITY=table) is the placeholder written, and the location is shown as `also`."""
    event = PROJECT_ROOT.parent / "shared" / "openlineage" / "sequences" / "compat-tests__CLL" / "8.json"
    done = qn_tester("--event", str(event))
    assert done.returncode == 3
    lines = json_lines(done.stdout)
    assert [(x["direction"], x["namespace"], x["name"]) for x in lines] == [
        ("input", "file:/tmp/cll_test", "default.cll_source1"),
        ("input", "file:/tmp/cll_test", "default.cll_source2"),
        ("output", "file:/tmp/cll_test", "default.tbl1"),
    ]
    assert lines[2] == {
        "direction": "output",
        "namespace": "file:/tmp/cll_test",
        "name": "default.tbl1",
        "QualifiedName": "file:/tmp/cll_test/default.tbl1",
        "PurviewType": "openlineage_dataset",
        "Rule": None,
        "error": "no mapping rule matched (namespace prefix 'file:/tmp/cll_test', 55 rules tried)",
        "also": {
            "namespace": "file",
            "name": "/tmp/cll_test/tbl1",
            "QualifiedName": "file:/tmp/cll_test/tbl1",
            "PurviewType": "openlineage_dataset",
            "Rule": None,
            "error": "no mapping rule matched (namespace prefix 'file', 55 rules tried); a file system: no "
            "Purview scanner registers it, so it stays a placeholder (see "
            "docs/guides/producers-and-names.md)",
        },
    }


def test_event_shows_the_metastore_table_the_catalog_gets_and_its_location_as_also(tmp_path: Path):
    """Both identities map: DATASET_IDENTITY=table (the default) writes the hive_table."""
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "spark", "name": "write"},
        "outputs": [
            {
                "namespace": "abfss://gold@lake.dfs.core.windows.net",
                "name": "/sales",
                "facets": {
                    "symlinks": {
                        "identifiers": [{"namespace": "hive://metastore", "name": "gold.sales", "type": "TABLE"}]
                    }
                },
            }
        ],
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    done = qn_tester("--event", str(path))
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout) == [
        {
            "direction": "output",
            "namespace": "hive://metastore",
            "name": "gold.sales",
            "QualifiedName": "gold.sales@metastore",
            "PurviewType": "hive_table",
            "Rule": "hiveMetastoreTable",
            "also": {
                "namespace": "abfss://gold@lake.dfs.core.windows.net",
                "name": "/sales",
                "QualifiedName": "https://lake.dfs.core.windows.net/gold/sales",
                "PurviewType": "azure_datalake_gen2_path",
                "Rule": "adlsGen2",
            },
        }
    ]
    storage = qn_tester("--event", str(path), env={"DATASET_IDENTITY": "storage"})
    assert [(x["QualifiedName"], x["also"]["QualifiedName"]) for x in json_lines(storage.stdout)] == [
        ("https://lake.dfs.core.windows.net/gold/sales", "gold.sales@metastore")
    ]
