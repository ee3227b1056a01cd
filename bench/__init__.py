"""Benchmarks: `python -m bench` prints one table (see bench/__main__.py)."""
