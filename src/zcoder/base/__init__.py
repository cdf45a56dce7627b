"""What every layer of zcoder uses: sanitizing, safe private files, lazy package faces,
the log file, consent, counted nouns, blank runs and the ssh command line.

A leaf: it imports nothing else of zcoder (tests/test_import_tree.py holds it to that),
so the relay, the agent and every front end can use it without importing each other.
It has no face: each module is small and is imported by its own name
(``from zcoder.base.sanitize import visible``).
"""
