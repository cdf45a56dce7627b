"""The Textual widgets of the TUI (and the command palette's provider)."""
