"""The documentation site's generated reference pages (settings, command line): `python -m tools.docs`."""
