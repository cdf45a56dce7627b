"""What every layer of zcoder uses: sanitizing, safe private files, display helpers, lazy faces, the log file, consent, errors.

A leaf: it imports nothing else of zcoder.
"""
