"""zcoder's slash commands, declared once for every front end (the TUI, an editor over
ACP, ``zcoder --connect``): no Textual and no ACP here; each front end reads them.
"""
