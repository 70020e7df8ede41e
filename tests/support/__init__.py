"""Helpers that several test modules share (no test module imports another: tests/unit/test_test_imports.py)."""
