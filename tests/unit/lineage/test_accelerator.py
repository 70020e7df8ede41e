"""Taking over the accelerator's estate, the pure part (olparser/lineage/accelerator.py): which processes are its, what
replaces each, and what becomes of its placeholders."""

from __future__ import annotations

from olparser.lineage.accelerator import (
    PLACEHOLDER_TYPE,
    Estate,
    EstateProcess,
    hashed_owner,
    plan_migration,
    render,
    successor_of,
    takeover_run_key,
)

WS = "databricks://adb-1.2.azuredatabricks.net"
NOTEBOOK = ("databricks_notebook", f"{WS}/notebooks/Shared/etl/orders")
LAKE = "https://contosolake.dfs.core.windows.net"
ORDERS = ("azure_datalake_gen2_path", f"{LAKE}/raw/Orders")
OUT_PLACEHOLDER = (PLACEHOLDER_TYPE, f"{LAKE}/curated/orders_enriched")  # lower-cased by the accelerator
OUT = ("azure_datalake_gen2_path", f"{LAKE}/curated/Orders_Enriched")
SFTP = (PLACEHOLDER_TYPE, "sftp://files.contoso.com/drop/orders.csv")
HASHED = f"{NOTEBOOK[1]}/processes/6F1ED002AB5595859014EBF0951522D9->0CBC6611F5540BD0809A388DC95A615B"


def test_the_accelerators_processes_are_recognised_by_their_hashed_names():
    assert hashed_owner(HASHED) == NOTEBOOK[1]
    assert hashed_owner(f"{NOTEBOOK[1]}/processes/{'ab' * 16}->{'0f' * 16}") == NOTEBOOK[1]  # hex in either case
    assert hashed_owner(f"{NOTEBOOK[1]}/processes/append_data/{OUT[1]}") is None
    assert takeover_run_key(("databricks_process", HASHED)).startswith("accelerator:")
    assert len(takeover_run_key(("databricks_process", HASHED))) == len("accelerator:") + 40


def accelerator(suffix: str, inputs: tuple, output: tuple) -> EstateProcess:
    return EstateProcess(("databricks_process", f"{HASHED}{suffix}"), NOTEBOOK, inputs, (output,))


OURS = EstateProcess(
    ("databricks_process", f"{NOTEBOOK[1]}/processes/append_data/{OUT[1]}"), NOTEBOOK, (ORDERS,), (OUT,)
)


def test_a_process_whose_successor_exists_is_retired_and_the_placeholder_only_it_used_goes():
    old = accelerator("", (ORDERS,), OUT_PLACEHOLDER)
    plan = plan_migration(Estate(accelerator=(old,), successors=(OURS,), placeholders={OUT_PLACEHOLDER: OUT[0]}))
    assert plan.retire == ((old.key, OURS.key),)
    assert (plan.pending, plan.repoint, plan.kept_placeholders) == ((), (), ())
    assert plan.retire_placeholders == (OUT_PLACEHOLDER,)
    assert plan.taken_over == (old,)


def test_every_input_combination_of_one_output_retires_for_the_one_successor():
    first, second = accelerator("a", (ORDERS,), OUT_PLACEHOLDER), accelerator("b", (ORDERS, SFTP), OUT_PLACEHOLDER)
    plan = plan_migration(Estate(accelerator=(second, first), successors=(OURS,), placeholders={}))
    assert plan.retire == ((first.key, OURS.key), (second.key, OURS.key))
    assert plan.retire_placeholders == (OUT_PLACEHOLDER, SFTP)


def test_without_a_successor_a_process_waits_and_is_repointed_to_the_real_dataset_the_catalog_holds():
    old = accelerator("", (SFTP, ORDERS), OUT_PLACEHOLDER)
    real_out = (OUT[0], OUT_PLACEHOLDER[1])  # the scan registered it under the lower-case name the accelerator used
    plan = plan_migration(
        Estate(
            accelerator=(old,),
            placeholders={OUT_PLACEHOLDER: OUT[0], SFTP: "sftp_file"},
            existing=frozenset({real_out}),
        )
    )
    assert plan.pending == (old,)
    assert plan.repoint == ((OUT_PLACEHOLDER, real_out),)
    assert (plan.retire_placeholders, plan.kept_placeholders) == ((OUT_PLACEHOLDER,), (SFTP,))
    assert plan.placeholders_of(old) == (SFTP,)


def test_the_successors_dataset_of_the_same_name_in_any_case_is_the_real_one():
    other_notebook = ("databricks_notebook", f"{WS}/notebooks/Shared/etl/other")
    waiting = EstateProcess(
        ("databricks_process", f"{other_notebook[1]}/processes/{'0' * 32}->{'1' * 32}"),
        other_notebook,
        (OUT_PLACEHOLDER,),
        (SFTP,),
    )
    plan = plan_migration(Estate(accelerator=(waiting,), successors=(OURS,), placeholders={OUT_PLACEHOLDER: OUT[0]}))
    assert plan.repoint == ((OUT_PLACEHOLDER, OUT),)
    assert plan.kept_placeholders == (SFTP,)


def test_a_successor_is_of_the_same_owner_and_output_in_any_case_only():
    old = accelerator("", (ORDERS,), OUT_PLACEHOLDER)
    elsewhere = EstateProcess(OURS.key, ("databricks_notebook", f"{WS}/notebooks/x"), (ORDERS,), (OUT,))
    assert successor_of(old, [elsewhere]) is None
    assert successor_of(old, [OURS]) == OURS
    assert successor_of(EstateProcess(old.key, NOTEBOOK), [OURS]) is None  # no output: nothing to compare


def test_the_plan_as_printed():
    old = accelerator("", (ORDERS,), OUT_PLACEHOLDER)
    plan = plan_migration(
        Estate(accelerator=(old,), successors=(OURS,), placeholders={OUT_PLACEHOLDER: OUT[0]}, owners=(NOTEBOOK,))
    )
    assert render(plan, "http://catalog", applied=False) == [
        "http://catalog: the accelerator's estate: 1 processes, 1 placeholders, under 1 workspaces, notebooks, jobs "
        "and tasks",
        "Taken over: written by ol2purview from now on, unchanged (1):",
        f"  databricks_notebook  {NOTEBOOK[1]}",
        "Retired: ol2purview's process of the same owner and output replaces it (1):",
        f"  {HASHED}\n    -> {OURS.key[1]}",
        "Taken over, replaced by the next run of its code: none",
        "Repointed to the real dataset (inputs, outputs, columnMapping), then retired: none",
        "Placeholders retired: no process uses them any more (1):",
        f"  {OUT_PLACEHOLDER[1]}",
        "Placeholders kept until the processes that use them are replaced: none",
        "Nothing was changed: `ol2purview migrate accelerator --apply` carries it out.",
    ]
