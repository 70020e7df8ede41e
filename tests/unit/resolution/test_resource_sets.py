"""Purview's resource-set rules: the names the connector predicts and the grouping `catalog scan` simulates, on the
examples Purview documents (each cited where it is used) and on what Spark and Delta write."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from olparser.resolution.resource_sets import (
    RESOURCE_SET_TYPES,
    ResourceSetRules,
    ScannedAsset,
    default_account_config,
    display_name,
    group_files,
    matches_folder,
    resource_set_names,
    scanned_name,
    spark_folder_of,
    split_storage_path,
)

DEFAULT = ResourceSetRules.default()
BLOB = "https://myaccount.blob.core.windows.net/mycontainer"
LAKE = "https://acct.dfs.core.windows.net/silver"
PART = "part-00000-8f850371-9b03-42c4-9d22-f83bc81c9b68-c000.snappy.parquet"
PART_1 = "part-00001-8f850371-9b03-42c4-9d22-f83bc81c9b68-c000.snappy.parquet"


def _rules_with(change) -> ResourceSetRules:
    body = default_account_config()
    change(body["pathPatternConfig"])
    return ResourceSetRules.from_account_config(body)


# --- Microsoft Learn, "Understanding resource sets" (purview/data-map-resource-sets) --------------------------------
def test_a_number_folder_is_a_resource_set():
    # "a data source whose URL is https://myaccount.blob.core.windows.net/mycontainer/machinesets/23/foo.parquet ...
    # the number pattern matches 23 ... part of a resource set named .../mycontainer/machinesets/{N}/foo.parquet"
    placement = scanned_name(f"{BLOB}/machinesets/23/foo.parquet", DEFAULT)
    assert (placement.qualified_name, placement.is_resource_set) == (f"{BLOB}/machinesets/{{N}}/foo.parquet", True)
    assert resource_set_names(f"{BLOB}/machinesets/23/foo.parquet", DEFAULT, folder=False) == (
        f"{BLOB}/machinesets/{{N}}/foo.parquet",
    )


def test_localization_and_number_patterns_group_web_logs():
    # "for a URL like .../mycontainer/weblogs/en_au/23.json, Microsoft Purview matches both the localization pattern
    # and the number pattern, producing a resource set named .../mycontainer/weblogs/{LOC}/{N}.json" and "would map
    # the following resources to the same resource set: .../weblogs/cy_gb/1004.json, .../weblogs/cy_gb/234.json,
    # .../weblogs/de_Ch/23434.json"
    assert scanned_name(f"{BLOB}/weblogs/en_au/23.json", DEFAULT).qualified_name == f"{BLOB}/weblogs/{{LOC}}/{{N}}.json"
    files = [f"{BLOB}/weblogs/cy_gb/1004.json", f"{BLOB}/weblogs/cy_gb/234.json", f"{BLOB}/weblogs/de_Ch/23434.json"]
    assert group_files(files, DEFAULT) == [
        ScannedAsset(
            qualified_name=f"{BLOB}/weblogs/{{LOC}}/{{N}}.json",
            type_name="azure_blob_resource_set",
            name="weblogs",
            is_resource_set=True,
            partition_count=3,
            files=tuple(sorted(files)),
        )
    ]


def test_a_number_in_a_file_name():
    # Example 3: "Qualified name: https://myblob.blob.core.windows.net/sample-data/data{N}.csv  Display name: "data""
    files = [
        "https://myblob.blob.core.windows.net/sample-data/data1.csv",
        "https://myblob.blob.core.windows.net/sample-data/data22.csv",
    ]
    [asset] = group_files(files, DEFAULT)
    assert (asset.qualified_name, asset.name, asset.partition_count) == (
        "https://myblob.blob.core.windows.net/sample-data/data{N}.csv",
        "data",
        2,
    )


def test_dates_numbers_and_guids_in_one_path():
    # Example 2: "Qualified name: https://myblob.blob.core.windows.net/my-partitioned-data/{Year}-{Month}-{Day}/
    # {N}-{N}-{N}-{N}/{GUID}  Display name: "my partitioned data""
    file = (
        "https://myblob.blob.core.windows.net/my-partitioned-data/2021-03-04/01-02-03-04/"
        "6f1c0a2e-1b3d-4c5e-9f70-8a9b0c1d2e3f"
    )
    expected = "https://myblob.blob.core.windows.net/my-partitioned-data/{Year}-{Month}-{Day}/{N}-{N}-{N}-{N}/{GUID}"
    assert scanned_name(file, DEFAULT).qualified_name == expected
    assert display_name(expected) == "my partitioned data"


def test_spark_output_folder_display_name():
    # Example 1: "Qualified name: https://myblob.blob.core.windows.net/sample-data/name-of-spark-output/
    # {SparkPartitions}  Display name: "name of spark output""
    [asset] = group_files([f"https://myblob.blob.core.windows.net/sample-data/name-of-spark-output/{PART}"], DEFAULT)
    assert (asset.qualified_name, asset.name) == (
        "https://myblob.blob.core.windows.net/sample-data/name-of-spark-output/{SparkPartitions}",
        "name of spark output",
    )


def test_office_documents_are_never_grouped_but_csv_is():
    # "Microsoft Purview intentionally doesn't try to classify most document file types like Word, Excel, or PDF as
    # Resource Sets. The exception is CSV format since that is a common partitioned file format."
    files = [
        f"{BLOB}/reports/2021/summary_23.docx",
        f"{BLOB}/reports/2021/Budget_23.XLSX",
        f"{BLOB}/reports/2021/extract_23.csv",
    ]
    assert [(a.qualified_name, a.type_name, a.is_resource_set) for a in group_files(files, DEFAULT)] == [
        (f"{BLOB}/reports/2021/Budget_23.XLSX", "azure_blob_path", False),
        (f"{BLOB}/reports/2021/summary_23.docx", "azure_blob_path", False),
        (f"{BLOB}/reports/{{N}}/extract_{{N}}.csv", "azure_blob_resource_set", True),
    ]


def test_year_month_day_folders_are_one_complex_pattern():
    # "Complex patterns ... Date(yyyy/mm/dd)InPath  {Year}/{Month}/{Day}  Year/month/day pattern spanning multiple
    # folders"
    assert (
        scanned_name(f"{BLOB}/logs/2024/01/15/app.log", DEFAULT).qualified_name
        == f"{BLOB}/logs/{{Year}}/{{Month}}/{{Day}}/app.log"
    )
    no_dates = _rules_with(lambda c: c["complexReplacers"].pop(1))
    assert (
        scanned_name(f"{BLOB}/logs/2024/01/15/app.log", no_dates).qualified_name
        == f"{BLOB}/logs/{{N}}/{{N}}/{{N}}/app.log"
    )


def test_a_version_string_is_not_a_number():
    # the default rules' doNotReplaceRegex keeps version strings (v1.2.3) out of the number patterns
    assert scanned_name(f"{BLOB}/tool/v1.2.3/notes.txt", DEFAULT).is_resource_set is False
    assert (
        scanned_name(f"{BLOB}/tool/v1.2.3/notes_7.txt", DEFAULT).qualified_name == f"{BLOB}/tool/v1.2.3/notes_{{N}}.txt"
    )


# --- Spark and Delta output (Learn: "{SparkPartitions}"; partitioned "Year={Year}/Month={Month}/Day={Day}") --------
def test_a_spark_output_folder_is_one_resource_set():
    files = [
        f"{LAKE}/orders/{PART}",
        f"{LAKE}/orders/{PART_1}",
        f"{LAKE}/orders/_SUCCESS",
        f"{LAKE}/orders/.{PART}.crc",
    ]
    assert group_files(files, DEFAULT) == [
        ScannedAsset(
            qualified_name=f"{LAKE}/orders/{{SparkPartitions}}",
            type_name="azure_datalake_gen2_resource_set",
            name="orders",
            is_resource_set=True,
            partition_count=2,
            files=tuple(sorted(files)),
        )
    ]
    assert resource_set_names(f"{LAKE}/orders", DEFAULT) == (f"{LAKE}/orders/{{SparkPartitions}}",)


def test_hive_partition_folders_keep_their_keys():
    # "partitioned" Spark output: .../my-partitioned-data/Year={Year}/Month={Month}/Day={Day}/{SparkPartitions}
    files = [
        f"{LAKE}/sales/Year=2024/Month=1/Day=31/{PART}",
        f"{LAKE}/sales/Year=2024/Month=2/Day=1/{PART}",
        f"{LAKE}/sales/Year=2023/Month=12/Day=5/{PART_1}",
        f"{LAKE}/sales/_delta_log/00000000000000000000.json",
        f"{LAKE}/sales/_delta_log/00000000000000000001.json",
    ]
    [asset] = group_files(files, DEFAULT)
    assert (asset.qualified_name, asset.partition_count, asset.name, len(asset.files)) == (
        f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/Day={{Day}}/{{SparkPartitions}}",
        3,
        "sales",
        5,
    )
    assert resource_set_names(f"{LAKE}/sales/Year=2024/Month=1/Day=31", DEFAULT) == (
        f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/Day={{Day}}/{{SparkPartitions}}",
    )


def test_a_non_date_partition_key_names_itself():
    # undocumented: region=eu -> region={region} (the choice made in resource_sets._partition_placeholder)
    assert resource_set_names(f"{LAKE}/events/region=eu", DEFAULT) == (
        f"{LAKE}/events/region={{region}}/{{SparkPartitions}}",
    )
    assert (
        scanned_name(f"{LAKE}/events/region=eu/{PART}", DEFAULT).qualified_name
        == f"{LAKE}/events/region={{region}}/{{SparkPartitions}}"
    )


def test_reference_connector_issue_112_a_folder_named_like_a_file():
    # the reference connector's issue #112: Spark writes .../bar/baz.parquet, the scan registers
    # .../bar/baz.parquet/{SparkPartitions}
    folder = "https://acct.dfs.core.windows.net/lake/foo/bar/baz.parquet"
    assert resource_set_names(folder, DEFAULT) == (f"{folder}/{{SparkPartitions}}",)
    [asset] = group_files([f"{folder}/{PART}", f"{folder}/_SUCCESS"], DEFAULT)
    assert asset.qualified_name == f"{folder}/{{SparkPartitions}}"


def test_folders_above_a_spark_output_are_generalised_too():
    # the Spark resource set's directories go through the regex patterns (Learn, data quality: "Make sure there are
    # no {n} patterns in directory/sub-directory structure" of a {SparkPartitions} FQN)
    assert (
        scanned_name(f"{LAKE}/orders_2024/{PART}", DEFAULT).qualified_name == f"{LAKE}/orders_{{N}}/{{SparkPartitions}}"
    )
    assert resource_set_names(f"{LAKE}/orders_2024", DEFAULT) == (
        f"{LAKE}/orders_2024/{{SparkPartitions}}",
        f"{LAKE}/orders_{{N}}/{{SparkPartitions}}",
    )
    uc = f"{LAKE}/__unitystorage/catalogs/1f2e3d4c-0000-4000-8000-000000000001/tables/9a8b7c6d-0000-4000-8000-000000000002"
    assert (
        resource_set_names(uc, DEFAULT)[-1]
        == f"{LAKE}/__unitystorage/catalogs/{{GUID}}/tables/{{GUID}}/{{SparkPartitions}}"
    )


def test_delta_bookkeeping_alone_is_an_empty_table():
    # undocumented: a Delta table with a log and no data file yet is its resource set, with no partition
    files = [f"{LAKE}/empty/_delta_log/00000000000000000000.json"]
    assert group_files(files, DEFAULT) == [
        ScannedAsset(
            qualified_name=f"{LAKE}/empty/{{SparkPartitions}}",
            type_name="azure_datalake_gen2_resource_set",
            name="empty",
            is_resource_set=True,
            partition_count=0,
            files=tuple(files),
        )
    ]


def test_a_partitioned_delta_table_gets_no_second_unpartitioned_set():
    files = [
        f"{LAKE}/t/k=a/{PART}",
        f"{LAKE}/t/k=b/{PART}",
        f"{LAKE}/t/_delta_log/00000000000000000000.json",
        f"{LAKE}/t/_delta_log/_last_checkpoint",
        f"{LAKE}/single.json",
        f"{LAKE}/t2/readme.md",
    ]
    assert [(a.qualified_name, a.is_resource_set, a.partition_count) for a in group_files(files, DEFAULT)] == [
        (f"{LAKE}/single.json", False, 1),
        (f"{LAKE}/t/k={{k}}/{{SparkPartitions}}", True, 2),
        (f"{LAKE}/t2/readme.md", False, 1),
    ]


def test_spark_folder_of_and_matches_folder():
    assert spark_folder_of(f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}") == f"{LAKE}/sales"
    assert spark_folder_of(f"{LAKE}/sales/{{SparkPartitions}}") == f"{LAKE}/sales"
    assert spark_folder_of(f"{LAKE}/sales/{{N}}.json") is None
    assert matches_folder(f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}", f"{LAKE}/sales", DEFAULT) is True
    assert matches_folder(f"{LAKE}/sales_eu/Year={{Year}}/{{SparkPartitions}}", f"{LAKE}/sales", DEFAULT) is False
    assert matches_folder(f"{LAKE}/orders_{{N}}/{{SparkPartitions}}", f"{LAKE}/orders_2023", DEFAULT) is True


# --- the account's configuration ----------------------------------------------------------------------------------
def test_every_storage_path_type_has_its_resource_set_type():
    assert RESOURCE_SET_TYPES == {
        "azure_datalake_gen2_path": "azure_datalake_gen2_resource_set",
        "azure_blob_path": "azure_blob_resource_set",
        "azure_datalake_gen1_path": "azure_datalake_gen1_resource_set",
        "azure_file": "azure_file_resource_set",
        "aws_s3_v2_object": "aws_s3_v2_resource_set",
    }
    names = {
        qn: split_storage_path(qn)
        for qn in (
            "https://a.dfs.core.windows.net/fs/x",
            "https://a.blob.core.windows.net/c/x",
            "https://a.file.core.windows.net/s/x",
            "adl://a.azuredatalakestore.net/d/x",
            "s3://bucket/d/x",
            "https://a.dfs.core.windows.net/fs",
            "abfss://fs@a/x",
        )
    }
    assert {qn: (p.root, p.segments, p.path_type) if p else None for qn, p in names.items()} == {
        "https://a.dfs.core.windows.net/fs/x": (
            "https://a.dfs.core.windows.net/fs",
            ("x",),
            "azure_datalake_gen2_path",
        ),
        "https://a.blob.core.windows.net/c/x": ("https://a.blob.core.windows.net/c", ("x",), "azure_blob_path"),
        "https://a.file.core.windows.net/s/x": ("https://a.file.core.windows.net/s", ("x",), "azure_file"),
        "adl://a.azuredatalakestore.net/d/x": (
            "adl://a.azuredatalakestore.net",
            ("d", "x"),
            "azure_datalake_gen1_path",
        ),
        "s3://bucket/d/x": ("s3://bucket", ("d", "x"), "aws_s3_v2_object"),
        "https://a.dfs.core.windows.net/fs": None,
        "abfss://fs@a/x": None,
    }


def test_the_default_body_round_trips():
    assert ResourceSetRules.from_account_config(default_account_config()) == ResourceSetRules.default()
    assert ResourceSetRules.from_account_config(copy.deepcopy(default_account_config())) == DEFAULT


def test_dates_as_a_series_of_numbers():
    # Learn: dates are "represented with {Year}[delimiter]{Month}[delimiter]{Day} or series of {N}s"; the
    # 2019-11-01-preview example configuration replaces them with {N}$2{N}$4{N}$6
    def numbers(config):
        for replacer in config["regexReplacers"]:
            if replacer["name"] == "yyyy-mm-dd":
                replacer["replaceWith"] = "$1{N}$3{N}$5{N}$7"

    assert (
        scanned_name(f"{BLOB}/d/2021-03-04/x.json", _rules_with(numbers)).qualified_name
        == f"{BLOB}/d/{{N}}-{{N}}-{{N}}/x.json"
    )


def test_a_disabled_replacer_does_not_apply():
    def no_locales(config):
        next(r for r in config["regexReplacers"] if r["name"] == "Localization")["disabled"] = True

    assert (
        scanned_name(f"{BLOB}/weblogs/en_au/23.json", _rules_with(no_locales)).qualified_name
        == f"{BLOB}/weblogs/en_au/{{N}}.json"
    )


def test_without_default_patterns_nothing_is_grouped():
    rules = _rules_with(lambda c: c.update(enableDefaultPatterns=False))
    assert scanned_name(f"{BLOB}/machinesets/23/foo.parquet", rules).is_resource_set is False
    assert resource_set_names(f"{LAKE}/orders", rules) == ()
    assert [a.is_resource_set for a in group_files([f"{LAKE}/orders/{PART}"], rules)] == [False]


def test_an_account_regex_and_its_group_references():
    # .NET substitutions: $n, ${n}, ${name}, $$ and $& (the account API stores .NET regexes)
    def custom(config):
        config["regexReplacers"] = [
            {
                "name": "Batch",
                "disabled": False,
                "replaceWith": "B(${kind}|$1|$$|$&)",
                "regex": {"regexStr": r"batch-(?<kind>[a-z]+)(\d+)", "options": 1},
            }
        ]

    assert (
        scanned_name(f"{BLOB}/in/BATCH-xy7.bin", _rules_with(custom)).qualified_name
        == f"{BLOB}/in/B(xy|xy|$|BATCH-xy7).bin"
    )


def test_a_runaway_account_regex_is_cut_short():
    # an account's own regex that backtracks without end counts as no match (a per-call timeout), never a hang
    def runaway(config):
        config["regexReplacers"] = [
            {"name": "Slow", "disabled": False, "replaceWith": "{X}", "regex": {"regexStr": "(a|aa)+b", "options": 0}}
        ]

    file = f"{BLOB}/in/{'a' * 40}!"
    assert scanned_name(file, _rules_with(runaway)).is_resource_set is False


# Learn, "Create resource set pattern rules" (purview/how-to-resource-set-pattern-rules), examples 2, 3 and 4
_IOT = [
    "https://myazureblob.blob.core.windows.net/bar/raw/machinename-89/01-01-2020/22:33:22-001.avro",
    "https://myazureblob.blob.core.windows.net/bar/raw/machinename-89/01-01-2020/22:33:22-002.avro",
    "https://myazureblob.blob.core.windows.net/bar/raw/machinename-89/02-01-2020/22:33:22-001.avro",
    "https://myazureblob.blob.core.windows.net/bar/raw/machinename-90/01-01-2020/22:33:22-001.avro",
]


def _scoped(*rules: tuple[str, bool]) -> ResourceSetRules:
    def add(config):
        config["scopedRules"] = [
            {
                "bindingUrl": "https://myazureblob.blob.core.windows.net/bar/",
                "storeType": "AzureBlob",
                "rules": [
                    {"name": f"r{i}", "qualifiedName": qn, "isResourceSet": is_set}
                    for i, (qn, is_set) in enumerate(rules)
                ],
            }
        ]

    return _rules_with(add)


def test_pattern_rules_with_dynamic_replacers():
    # Example 2: rules raw/machinename-89/{date:date}/{time:time}-{id:int}.avro (and -90) -> "2 resource sets ...
    # .../bar/raw/machinename-89/{date}/{time}-{id}.avro" and ".../machinename-90/{date}/{time}-{id}.avro"
    rules = _scoped(
        ("raw/machinename-89/{date:date}/{time:time}-{id:int}.avro", True),
        ("raw/machinename-90/{date:date}/{time:time}-{id:int}.avro", True),
    )
    assert [(a.qualified_name, a.partition_count) for a in group_files(_IOT, rules)] == [
        ("https://myazureblob.blob.core.windows.net/bar/raw/machinename-89/{date}/{time}-{id}.avro", 3),
        ("https://myazureblob.blob.core.windows.net/bar/raw/machinename-90/{date}/{time}-{id}.avro", 1),
    ]


def test_pattern_rules_with_static_replacers():
    # Example 3: raw/machinename-{{machineid:int}}/{date:date}/{time:time}-{id:int}.avro -> one resource set per
    # machine id
    rules = _scoped(("raw/machinename-{{machineid:int}}/{date:date}/{time:time}-{id:int}.avro", True))
    assert [a.qualified_name for a in group_files(_IOT, rules)] == [
        "https://myazureblob.blob.core.windows.net/bar/raw/machinename-89/{date}/{time}-{id}.avro",
        "https://myazureblob.blob.core.windows.net/bar/raw/machinename-90/{date}/{time}-{id}.avro",
    ]


def test_pattern_rules_that_do_not_group():
    # Example 4: "Resource Set: false" -> "4 individual assets"
    rules = _scoped(("raw/machinename-{{machineid:int}}/{{:date}}/{{:time}}-{{:int}}.avro", False))
    assert [(a.qualified_name, a.is_resource_set) for a in group_files(_IOT, rules)] == [(qn, False) for qn in _IOT]


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda c: c.__setitem__("regexReplacers", {}), "pathPatternConfig.regexReplacers"),
        (
            lambda c: c["regexReplacers"][1]["regex"].__setitem__("regexStr", "(unclosed"),
            "pathPatternConfig.regexReplacers[1].regex.regexStr",
        ),
        (lambda c: c["regexReplacers"][0].pop("regex"), "pathPatternConfig.regexReplacers[0].regex"),
        (
            lambda c: c["regexReplacers"][0]["regex"].__setitem__("options", 64),
            "pathPatternConfig.regexReplacers[0].regex.options",
        ),
        (
            lambda c: c["regexReplacers"][2].__setitem__("condition", "Sometimes"),
            "pathPatternConfig.regexReplacers[2].condition",
        ),
        (
            lambda c: c["rejectedPatterns"][0].__setitem__("filterType", "Glob"),
            "pathPatternConfig.rejectedPatterns[0].filterType",
        ),
        (lambda c: c.__setitem__("enableDefaultPatterns", "yes"), "pathPatternConfig.enableDefaultPatterns"),
        (
            lambda c: c.__setitem__(
                "scopedRules",
                [
                    {
                        "bindingUrl": "https://a.blob.core.windows.net/c",
                        "rules": [{"qualifiedName": "x/{n:integer}.csv"}],
                    }
                ],
            ),
            "pathPatternConfig.scopedRules[0].rules[0].qualifiedName",
        ),
        (lambda c: c.__setitem__("scopedRules", [{"rules": []}]), "pathPatternConfig.scopedRules[0].bindingUrl"),
    ],
)
def test_an_invalid_body_names_the_field(change, field):
    body = default_account_config()
    change(body["pathPatternConfig"])
    with pytest.raises(ValueError) as raised:
        ResourceSetRules.from_account_config(body)
    assert f"resource set rule config: {field}:" in str(raised.value)


@pytest.mark.parametrize(
    "body, field", [([], "body"), ({}, "pathPatternConfig"), ({"pathPatternConfig": []}, "body.pathPatternConfig")]
)
def test_an_unreadable_body_names_the_field(body, field):
    with pytest.raises(ValueError, match=f"resource set rule config: {field}:"):
        ResourceSetRules.from_account_config(body)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=200),
        st.builds(lambda tail: f"{LAKE}/{tail}", st.text(max_size=120)),
        st.builds(lambda tail: f"{BLOB}/{tail}", st.text(alphabet="ab01_-=./{}Tv", max_size=60)),
    ),
    st.booleans(),
)
def test_odd_input_never_raises(path, folder):
    names = resource_set_names(path, DEFAULT, folder=folder)
    assert isinstance(names, tuple) and len(set(names)) == len(names)
    assert all(isinstance(n, str) for n in names)
    if folder:
        assert all(n.endswith("/{SparkPartitions}") for n in names)


def test_not_a_storage_path_has_no_resource_set():
    assert resource_set_names("mssql://server.database.windows.net/db/dbo/t", DEFAULT) == ()
    assert resource_set_names(None, DEFAULT) == ()  # type: ignore[arg-type]
    assert resource_set_names(f"{LAKE}/orders", "not rules") == ()  # type: ignore[arg-type]


_SEGMENTS = st.sampled_from(
    [
        "orders",
        "2024",
        "01",
        "15",
        "en_us",
        "Year=2023",
        "region=eu",
        "_delta_log",
        "v1.2.3",
        "6f1c0a2e-1b3d-4c5e-9f70-8a9b0c1d2e3f",
        "data_7",
    ]
)
_NAMES = st.sampled_from(
    [
        PART,
        PART_1,
        "_SUCCESS",
        f".{PART}.crc",
        "00000000000000000000.json",
        "23.json",
        "data1.csv",
        "report_2.docx",
        "readme.md",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.builds(lambda folders, name: "/".join([LAKE, *folders, name]), st.lists(_SEGMENTS, max_size=4), _NAMES),
        max_size=25,
    ),
    st.randoms(use_true_random=False),
)
@example(
    [f"{LAKE}/Year=2023/{PART}", f"{LAKE}/region=eu/{PART}", f"{LAKE}/_delta_log/00000000000000000000.json"],
    random.Random(1),
)
def test_grouping_is_the_same_whatever_the_order_and_places_every_file_once(files, rnd):
    shuffled = list(files)
    rnd.shuffle(shuffled)
    grouped = group_files(files, DEFAULT)
    assert group_files(shuffled + files[:3], DEFAULT) == grouped
    placed = [f for asset in grouped for f in asset.files]
    assert sorted(placed) == sorted(set(files))
    assert all(a.partition_count <= len(a.files) and (a.is_resource_set or a.partition_count == 1) for a in grouped)
