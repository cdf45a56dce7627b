"""Going to an agent's tmux pane from ``zcoder agents --watch``.

The pane comes from the agent's manifest (``tmux_pane``, ``%<digits>``), which is
self-reported, and pane ids are numbered per tmux server: ``%3`` of this server may be
another program. So the pane is used only when the agent's own process runs in it (its
pid is the pane's process or descends from it); otherwise the view says why not.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from typing import Final

from zcoder.base.sanitize import visible
from zcoder.relay import is_same_or_descendant
from zcoder.watch.rows import Row

TMUX_TIMEOUT: Final = 5.0


def _tmux(tmux: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tmux, *args], capture_output=True, text=True, timeout=TMUX_TIMEOUT, check=False
    )


def go_to_pane(row: Row, env: Mapping[str, str]) -> str:
    """Switch this tmux client to ``row``'s pane; what to tell the user either way."""
    name = visible(row.name)
    if not env.get("TMUX"):
        return f"Not inside tmux: cannot switch to {name}'s pane."
    if not row.pane:
        return f"{name} recorded no tmux pane (it was not started inside tmux)."
    tmux = shutil.which("tmux")
    if tmux is None:
        return "tmux is not on PATH."
    try:
        found = _tmux(tmux, "display-message", "-p", "-t", row.pane, "#{pane_pid}")
        pane_pid = found.stdout.strip()
        if found.returncode != 0 or not pane_pid.isdigit():
            return f"{name}'s pane {row.pane} is not in this tmux server."
        if not is_same_or_descendant(row.pid, int(pane_pid)):
            return f"{name} does not run in pane {row.pane} of this tmux server."
        for command in ("select-window", "select-pane"):
            done = _tmux(tmux, command, "-t", row.pane)
            if done.returncode != 0:
                return f"tmux {command} failed: {visible(done.stderr.strip())}"
        # Moves this client to the pane's session when it is another one; no client
        # (a script, a test) is fine: the pane is selected in its session already.
        _tmux(tmux, "switch-client", "-t", row.pane)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"tmux could not be run: {visible(str(exc))}"
    return f"Switched to {name} (pane {row.pane})."
