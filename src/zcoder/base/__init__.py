"""What every layer of zcoder uses: sanitizing, safe files, display helpers, faces, the log.

A leaf: it imports nothing else of zcoder.
"""
