"""End-to-end tests: real ``python -m zcoder`` processes in pseudo-terminals (pexpect).

Every test builds a private world under /tmp (registry, homes, runtime directories,
workspaces) and its own fake Ollama servers, and removes it afterwards; no process is
left behind. ``pytest tests/e2e`` runs them alone; ``ZCODER_E2E_KEEP=1`` keeps each
world, with the raw output of every pty, for a post-mortem.
"""
