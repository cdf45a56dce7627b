"""``zcoder --prompt TEXT``: one turn in the terminal, a front end like tui/ and acp/.

run.py runs the turn (``run_prompt``), approver.py asks on the terminal, input.py reads
piped input, output.py writes the reply (text or one JSON object).
"""
