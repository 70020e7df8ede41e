"""The system metadata of a run (olparser.lineage.metadata): what each facet contributes, bounded, and the process
attributes it fills — every one, empty when unknown."""

from __future__ import annotations

from olparser.lineage import LineageOptions
from olparser.lineage.context import run_context
from olparser.lineage.metadata import (
    MAX_ERROR_CHARS,
    MAX_QUALITY_COLUMNS,
    iso_time,
    process_run_attributes,
    system_metadata,
)
from olparser.runs.model import DatasetFacts, RunSnapshot

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"


def run_of(run_facets: dict, *, inputs=(), outputs=(), event_type="COMPLETE", producer=PRODUCER) -> RunSnapshot:
    return RunSnapshot(
        "r",
        "ns",
        "app.job",
        event_type,
        "2026-03-02T08:00:02.5Z",
        producer,
        run_facets=run_facets,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        start_time="2026-03-02T08:00:00Z",
        merge_times={"state": "2026-03-02T08:00:02.5Z"},
    )


def summary(run: RunSnapshot) -> dict:
    return system_metadata(run, run_context(run, LineageOptions()))


def test_a_databricks_job_run_on_a_cluster_with_statistics():
    environment = {
        "spark.databricks.clusterUsageTags.clusterId": "0101-123456-abcdefgh",
        "spark.databricks.clusterUsageTags.clusterName": "etl",
        "spark.databricks.job.id": "42",
        "spark.databricks.job.runId": "7001",
        "spark.databricks.notebook.path": "/Repos/etl/orders",
        "user": "ana@contoso.com",
    }
    outputs = [
        DatasetFacts("abfss://a@b", f"t{n}", io_facets={"outputStatistics": {"rowCount": n * 10, "size": 100}})
        for n in (1, 2)
    ] + [DatasetFacts("abfss://a@b", "t3", io_facets={"outputStatistics": {"rowCount": None}})]
    run = run_of(
        {
            "environment-properties": {"environment-properties": environment},
            "processing_engine": {"name": "spark", "version": "3.5.1", "openlineageAdapterVersion": "1.30.0"},
            "spark_applicationDetails": {"applicationId": "app-20260302", "userName": "root"},
        },
        outputs=outputs,
    )
    assert summary(run) == {
        "startTime": "2026-03-02T08:00:00.000Z",
        "endTime": "2026-03-02T08:00:02.500Z",
        "durationMs": 2500,
        "producer": PRODUCER,
        "openlineageVersion": "1.30.0",
        "sparkVersion": "3.5.1",
        "user": "ana@contoso.com",
        "applicationId": "app-20260302",
        "clusterId": "0101-123456-abcdefgh",
        "clusterName": "etl",
        "notebookPath": "/Repos/etl/orders",
        "jobId": "42",
        "jobRunId": "7001",
        "rowsWritten": 30,
        "bytesWritten": 200,
    }
    assert process_run_attributes(summary(run)) == {
        "lastRunStartTime": "2026-03-02T08:00:00.000Z",
        "lastRunEndTime": "2026-03-02T08:00:02.500Z",
        "lastRunClusterId": "0101-123456-abcdefgh",
        "lastRunJobId": "42",
        "lastRunJobRunId": "7001",
        "lastRunApplicationId": "app-20260302",
        "lastRunSparkVersion": "3.5.1",
        "lastRunOpenLineageVersion": "1.30.0",
        "lastRunParentJobNamespace": "",
        "lastRunParentJobName": "",
        "lastRunParentRunId": "",
        "lastRunRootJobNamespace": "",
        "lastRunRootJobName": "",
        "lastRunRootRunId": "",
        "lastRunDurationMs": 2500,
        "lastRunRowsWritten": 30,
        "lastRunBytesWritten": 200,
        "runCount": None,
        "firstRunTime": "",
    }


def test_older_producers_and_unknowns():
    legacy = run_of({"spark_version": {"spark-version": "3.2.1", "openlineage-spark-version": "0.12.0"}})
    assert (summary(legacy)["sparkVersion"], summary(legacy)["openlineageVersion"]) == ("3.2.1", "0.12.0")
    bare = run_of({}, event_type="RUNNING")  # no terminal event: no end, no duration; version from the producer URL
    assert summary(bare) == {
        "startTime": "2026-03-02T08:00:00.000Z",
        "producer": PRODUCER,
        "openlineageVersion": "1.23.0",
    }
    assert process_run_attributes({}) == {
        "lastRunStartTime": "",
        "lastRunEndTime": "",
        "lastRunClusterId": "",
        "lastRunJobId": "",
        "lastRunJobRunId": "",
        "lastRunApplicationId": "",
        "lastRunSparkVersion": "",
        "lastRunOpenLineageVersion": "",
        "lastRunParentJobNamespace": "",
        "lastRunParentJobName": "",
        "lastRunParentRunId": "",
        "lastRunRootJobNamespace": "",
        "lastRunRootJobName": "",
        "lastRunRootRunId": "",
        "lastRunDurationMs": None,
        "lastRunRowsWritten": None,
        "lastRunBytesWritten": None,
        "runCount": None,
        "firstRunTime": "",
    }
    other_engine = run_of({"processing_engine": {"name": "flink", "version": "1.18"}})
    assert "sparkVersion" not in summary(other_engine)


def test_a_failed_run_keeps_a_bounded_error_message_and_data_quality_metrics_are_bounded():
    columns = {f"c{n:03d}": {"nullCount": n, "min": 0.5, "quantiles": {"0.5": 1}} for n in range(80)}
    inputs = [
        DatasetFacts(
            "abfss://a@b",
            "in",
            io_facets={"dataQualityMetrics": {"rowCount": 1000, "bytes": 5, "fileCount": 2, "columnMetrics": columns}},
        ),
        DatasetFacts("abfss://a@b", "scored", facets={"dataQualityMetrics": {"rowCount": 7, "columnMetrics": {}}}),
    ]
    run = run_of(
        {"errorMessage": {"message": "x" * 2000, "programmingLanguage": "JAVA"}}, inputs=inputs, event_type="FAIL"
    )
    found = summary(run)
    assert found["errorMessage"] == "x" * MAX_ERROR_CHARS
    assert found["dataQuality"] == [
        {
            "namespace": "abfss://a@b",
            "name": "in",
            "rowCount": 1000,
            "bytes": 5,
            "fileCount": 2,
            "columnMetrics": {f"c{n:03d}": {"nullCount": n, "min": 0.5} for n in range(MAX_QUALITY_COLUMNS)},
        },
        {"namespace": "abfss://a@b", "name": "scored", "rowCount": 7},
    ]


def test_iso_time():
    assert (iso_time(None), iso_time(0.0), iso_time(1772438400.25)) == (
        "",
        "1970-01-01T00:00:00.000Z",
        "2026-03-02T08:00:00.250Z",
    )


def test_iso_time_cuts_to_milliseconds_and_keeps_the_year_as_written_before():
    # milliseconds are cut, not rounded; a year below 1000 is written unpadded, as it always was
    assert (
        iso_time(1772438400.9999),
        iso_time(253402300799.999),
        iso_time(-30610224000.0),
        iso_time(-50000000000.0),
    ) == ("2026-03-02T08:00:00.999Z", "9999-12-31T23:59:59.998Z", "1000-01-01T00:00:00.000Z", "385-07-25T07:06:40.000Z")
