"""Workers in worktrees: ``/spawn`` starts a zcoder in its own git worktree and tmux window,
``/team`` lists, merges and stops them (docs/relay.md, "Teams: workers in worktrees").

``git`` is the repository's side (worktrees, the merge preview, the merge), ``roster``
the workers a repository's lead spawned (a small private file under ``$ZCODER_HOME``),
``window`` tmux's side and the launcher the new window runs, ``spawn`` the steps between.
Nothing here imports the UI, the model or the agent: the relay only through its face.
"""
