"""What the front ends (the TUI, --prompt, --acp) share: opening a session, assembling
the agent, extensions, resume, the relay inbox and auto-turn policy."""
