"""olparser.lineage.combine: many runs' plans into one request with unique placeholders (pure, no I/O)."""

from __future__ import annotations

from olparser.lineage import LineagePlan, UnmatchedDataset
from olparser.lineage.combine import combine_plans, pack_plans, with_versions
from olparser.lineage.entities import assign_guids, entity, object_id


def plan(process: str, inputs: list[str], owner: str = "app", columns: tuple[str, ...] = ()) -> LineagePlan:
    """A run's plan: an external output, owned input placeholders (with columns), the owner and one process."""
    ordered = assign_guids(
        [
            [entity("azure_blob_path", f"out/{process}", {"name": process})],
            [entity("spark_application", owner, {"name": owner})],
            [entity("openlineage_dataset", name, {"name": name}) for name in inputs],
            [
                entity(
                    "openlineage_column",
                    f"{name}#{c}",
                    {"name": c},
                    {"dataset": object_id("openlineage_dataset", name)},
                )
                for name in inputs
                for c in columns
            ],
            [
                entity(
                    "spark_process",
                    process,
                    {
                        "name": process,
                        "lastRunId": process,
                        "inputs": [object_id("openlineage_dataset", n) for n in inputs],
                        "outputs": [object_id("azure_blob_path", f"out/{process}")],
                    },
                    {"application": object_id("spark_application", owner)},
                )
            ],
        ]
    )
    return LineagePlan(
        entities=tuple(e for e in ordered if e["typeName"] != "azure_blob_path"),
        external_datasets=tuple(e for e in ordered if e["typeName"] == "azure_blob_path"),
        unmatched=tuple(UnmatchedDataset("ns", name, "no rule") for name in inputs),
    )


def test_combined_plan_has_each_entity_once_with_unique_placeholders_and_resolved_references():
    combined = combine_plans([plan("p1", ["a", "b"], columns=("x",)), plan("p2", ["b", "c"], columns=("x",))])

    everything = [*combined.external_datasets, *combined.entities]
    assert [(e["typeName"], e["attributes"]["qualifiedName"], e["guid"]) for e in everything] == [
        ("azure_blob_path", "out/p1", "-1"),
        ("azure_blob_path", "out/p2", "-2"),
        ("spark_application", "app", "-3"),
        ("openlineage_dataset", "a", "-4"),
        ("openlineage_dataset", "b", "-5"),
        ("openlineage_column", "a#x", "-6"),
        ("openlineage_column", "b#x", "-7"),
        ("spark_process", "p1", "-8"),
        ("openlineage_dataset", "c", "-9"),
        ("openlineage_column", "c#x", "-10"),
        ("spark_process", "p2", "-11"),
    ]
    p2 = everything[-1]
    assert [(r["guid"], r["uniqueAttributes"]["qualifiedName"]) for r in p2["attributes"]["inputs"]] == [
        ("-5", "b"),
        ("-9", "c"),
    ]
    assert p2["attributes"]["outputs"][0]["guid"] == "-2"
    assert p2["relationshipAttributes"]["application"]["guid"] == "-3"
    assert everything[9]["relationshipAttributes"]["dataset"]["guid"] == "-9"
    assert [u.name for u in combined.unmatched] == ["a", "b", "c"]
    assert combined.process_names() == ("p1", "p2")


def test_a_single_plan_is_left_as_it_is():
    single = plan("p1", ["a"])
    assert combine_plans([single]) is single


def test_packs_stay_within_the_size_and_never_split_a_plan():
    plans = [plan(f"p{n}", [f"in{n}"]) for n in range(5)]  # 4 entities each, the owner shared
    groups = list(pack_plans(plans, 7, lambda p: p))
    assert [[p.process_names()[0] for p in group] for group in groups] == [["p0", "p1"], ["p2", "p3"], ["p4"]]
    big = plan("big", [f"in{n}" for n in range(10)])
    assert [len(g) for g in pack_plans([big, plans[0]], 7, lambda p: p)] == [1, 1]
    assert list(pack_plans([LineagePlan()], 7, lambda p: p)) == []


def test_with_versions_puts_the_chosen_content_in_and_keeps_the_plans_placeholders():
    original = plan("p1", ["a"], columns=("x",))
    newer_a = entity("openlineage_dataset", "a", {"name": "a", "storageLocation": "abfss://new"})
    versioned = with_versions(original, {("openlineage_dataset", "a"): newer_a})

    a = next(e for e in versioned.entities if e["attributes"]["qualifiedName"] == "a")
    assert a["attributes"] == {"qualifiedName": "a", "name": "a", "storageLocation": "abfss://new"}
    column = next(e for e in versioned.entities if e["typeName"] == "openlineage_column")
    assert column["relationshipAttributes"]["dataset"]["guid"] == a["guid"]
    assert with_versions(original, {("openlineage_dataset", "zz"): newer_a}) is original
