"""The TUI's modal screens: the guarded dialogs and the pickers."""
