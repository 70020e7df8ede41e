"""Function keys and auth levels, checked the way the Azure Functions host checks them.

A key arrives in the `x-functions-key` header or the `code` query parameter. `anonymous` needs none; `function`
accepts the function's own keys, a host key or the master key; `admin` accepts only the master key. Keys are compared
in constant time.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Mapping

KEY_HEADER = "x-functions-key"
KEY_PARAM = "code"
AUTH_LEVELS = ("anonymous", "function", "admin")


def generate_key() -> str:
    """A new random key, URL-safe (it travels as a query parameter), starting with a letter or digit: a key starting
    with '-' would be read as an option in `--key $KEY`. Keys generated before keep working (they are only read)."""
    while True:
        key = secrets.token_urlsafe(32)
        if key[0].isalnum():
            return key


def presented_key(headers: Mapping[str, str], params: Mapping[str, str]) -> str | None:
    """The key a caller sent: the header wins over `?code=`, as in Azure."""
    return headers.get(KEY_HEADER) or params.get(KEY_PARAM) or None


def _same(presented: bytes, key: str) -> bool:
    return hmac.compare_digest(presented, key.encode("utf-8"))


@dataclass(frozen=True)
class KeyRing:
    """All keys the host knows: the master key, host keys (valid for every function) and per-function keys."""

    master_key: str
    host_keys: tuple[str, ...] = ()
    function_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def allows(self, auth_level: str, function_name: str, presented: str | None) -> bool:
        """Whether a request carrying `presented` may call a function with `auth_level`."""
        level = auth_level.lower()
        if level == "anonymous":
            return True
        if level not in AUTH_LEVELS:
            raise ValueError(f"unknown auth level {auth_level!r} on function {function_name!r}")
        if not presented:
            return False
        candidate = presented.encode("utf-8")
        keys = [self.master_key]
        if level == "function":
            keys += [*self.host_keys, *self.function_keys.get(function_name, ())]
        matched = False
        for key in keys:  # no early exit: the time taken does not depend on which key matched
            matched |= _same(candidate, key)
        return matched
