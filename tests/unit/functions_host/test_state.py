"""What the local host keeps in its data folder: kept keys, the running-host record, owner-only permissions."""

import json
import os
import stat
import subprocess
import sys

from tools.functions_host.state import (
    KEYS_FILE,
    RUNNING_FILE,
    HostKeys,
    RunningHost,
    forget_running,
    read_keys,
    stop_leftover_azurite,
)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def record(data_dir, pid: int, **changes) -> RunningHost:
    fields = dict(
        pid=pid,
        url="http://127.0.0.1:7071",
        data_dir=str(data_dir),
        storage_mode="embedded",
        storage_connection=None,
        atlas_url="http://127.0.0.1:21000/api/atlas/v2",
        catalog_page="http://127.0.0.1:21000/",
        azurite_pid=None,
        azurite_location=None,
        started_at=1.5,
    )
    return RunningHost(**{**fields, **changes})


def test_generated_keys_are_written_owner_only_and_reused(tmp_path):
    data = tmp_path / "data"
    first = HostKeys.load_or_create(data)
    assert (first.path, first.created, first.function_key_kept) == (data / KEYS_FILE, True, True)
    assert len(first.function_key) >= 40 and len(first.master_key) >= 40 and first.function_key != first.master_key
    assert (mode(data), mode(data / KEYS_FILE)) == (0o700, 0o600)
    assert json.loads((data / KEYS_FILE).read_text()) == {
        "functionKey": first.function_key,
        "masterKey": first.master_key,
    }
    again = HostKeys.load_or_create(data)
    assert (again.function_key, again.master_key, again.created) == (first.function_key, first.master_key, False)
    assert read_keys(data) == {"functionKey": first.function_key, "masterKey": first.master_key}


def test_given_keys_win_and_are_not_written(tmp_path):
    both = HostKeys.load_or_create(tmp_path, "given-function-key", "given-master-key")
    assert both == HostKeys("given-function-key", "given-master-key", None, False, False)
    assert not (tmp_path / KEYS_FILE).exists()
    one = HostKeys.load_or_create(tmp_path, "given-function-key")
    assert (one.function_key, one.function_key_kept) == ("given-function-key", False)
    assert read_keys(tmp_path)["masterKey"] == one.master_key
    assert read_keys(tmp_path)["functionKey"] != "given-function-key"


def test_a_key_file_with_wider_permissions_is_rewritten_owner_only(tmp_path):
    (tmp_path / KEYS_FILE).write_text('{"functionKey": "f"}')
    os.chmod(tmp_path / KEYS_FILE, 0o644)
    keys = HostKeys.load_or_create(tmp_path)
    assert keys.function_key == "f" and keys.created
    assert mode(tmp_path / KEYS_FILE) == 0o600


def test_the_running_host_record_is_found_only_while_its_process_lives(tmp_path):
    running = record(tmp_path, os.getpid())
    running.write()
    assert mode(tmp_path / RUNNING_FILE) == 0o600
    assert RunningHost.find(tmp_path) == running
    assert json.loads((tmp_path / RUNNING_FILE).read_text())["storageMode"] == "embedded"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record(tmp_path, int(dead.stdout)).write()
    assert RunningHost.find(tmp_path) is None
    assert RunningHost.recorded(tmp_path).pid == int(dead.stdout)


def test_forget_removes_only_its_own_record(tmp_path):
    record(tmp_path, 12345).write()
    forget_running(tmp_path, os.getpid())
    assert (tmp_path / RUNNING_FILE).exists()
    forget_running(tmp_path, 12345)
    assert not (tmp_path / RUNNING_FILE).exists()


def test_a_leftover_pid_that_is_not_azurite_is_never_signalled(tmp_path):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        leftover = record(tmp_path, int(dead.stdout), azurite_pid=other.pid, azurite_location=str(tmp_path))
        assert stop_leftover_azurite(leftover) is None
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
