"""Other coding agents as helpers: Claude Code, Codex and opencode run on a task here.

``clis`` names each command line interface (how it is started non-interactively, how its
JSON event stream reads), ``workspace`` finds what a helper changed, ``run`` asks the user
and runs one, and ``tool`` is the model's ``delegate_task``.
"""
