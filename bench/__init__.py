"""Benchmarks. Each module `bench/<name>.py` has a `main()` that prints medians; `python -m bench` runs them all."""
