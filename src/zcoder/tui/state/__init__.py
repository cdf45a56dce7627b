"""The TUI's pieces with no Textual import: plain state and logic, tested alone."""
