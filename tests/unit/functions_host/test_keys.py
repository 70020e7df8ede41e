"""Auth levels and function keys."""

from tools.functions_host.keys import KeyRing, generate_key, presented_key

KEYS = KeyRing(master_key="m-key", host_keys=("h-key",), function_keys={"echo": ("e-key",)})


def test_anonymous_needs_no_key():
    assert KEYS.allows("anonymous", "health", None)


def test_function_level_accepts_function_host_and_master_keys():
    assert KEYS.allows("function", "echo", "e-key")
    assert KEYS.allows("function", "echo", "h-key")
    assert KEYS.allows("function", "echo", "m-key")


def test_function_level_refuses_missing_wrong_and_other_functions_keys():
    assert not KEYS.allows("function", "echo", None)
    assert not KEYS.allows("function", "echo", "")
    assert not KEYS.allows("function", "echo", "h-key ")
    assert not KEYS.allows("function", "other", "e-key")
    assert not KEYS.allows("function", "echo", "ключ")  # non-ASCII is compared as bytes, not an error


def test_admin_level_accepts_only_the_master_key():
    assert KEYS.allows("ADMIN", "echo", "m-key")
    assert not KEYS.allows("admin", "echo", "h-key")
    assert not KEYS.allows("admin", "echo", "e-key")


def test_header_wins_over_code_parameter():
    assert presented_key({"x-functions-key": "from-header"}, {"code": "from-query"}) == "from-header"
    assert presented_key({}, {"code": "from-query"}) == "from-query"
    assert presented_key({}, {}) is None


def test_generated_keys_are_long_random_and_url_safe():
    first, second = generate_key(), generate_key()
    assert first != second
    assert len(first) >= 40
    assert set(first) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_generated_key_never_starts_with_a_dash_or_underscore(monkeypatch):
    """`--key $KEY` reads a key starting with '-' as an option: such draws are thrown away."""
    import secrets

    draws = iter(["-starts-with-a-dash", "_starts_with_underscore", "Kfine-key_0"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda _n: next(draws))
    assert generate_key() == "Kfine-key_0"


def test_many_generated_keys_start_with_a_letter_or_digit():
    starts = {generate_key()[0] for _ in range(2000)}  # 1 in 32 draws starts with - or _: 2000 cannot all miss
    assert starts <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def test_a_kept_key_that_starts_with_a_dash_keeps_working(tmp_path):
    from tools.functions_host.state import HostKeys, write_private_json

    write_private_json(tmp_path / "host-keys.json", {"functionKey": "-old-key", "masterKey": "_old-master"})
    keys = HostKeys.load_or_create(tmp_path)
    assert (keys.function_key, keys.master_key, keys.created) == ("-old-key", "_old-master", False)
    assert KeyRing(keys.master_key, host_keys=(keys.function_key,)).allows("function", "f", "-old-key")
