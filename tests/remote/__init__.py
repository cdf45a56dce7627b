"""``zcoder --connect``: unit tests of its parts, and the TUI through a real sshd (tmux)."""
