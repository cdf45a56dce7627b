"""What the front ends (the TUI, ``--prompt``, ``--acp``, ``--connect``) share, below them
and above the agent: opening a session (session.py), assembling the agent (assembly.py)
with the workspace's extensions (extensions.py), finding and listing sessions to resume
(resume.py), the relay inbox's receipts and history (relay_inbox.py), the user's input
waiting for the agent (pending.py) and the count of relayed turns run without the user
(auto_turns.py). Only the front ends and cli.py import it (tests/test_import_tree.py);
``zcoder.agent`` keeps the turn and never imports it."""
