"""Benchmarks: ``make bench`` prints tables and rewrites docs/performance.md."""
