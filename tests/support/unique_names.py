"""Names no other test uses, for what lives on the session's one Azurite (tests/support/azurite_fixture.py)."""

from __future__ import annotations

import uuid


def unique_name(prefix: str = "q") -> str:
    """A queue or container name no other test uses (Azurite is shared by the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
