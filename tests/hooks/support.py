"""What the hook tests share: hooks that are real programs, settings files, a scripted user."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from zcoder.tools.approval import ApprovalDecision, CommandApprovalRequest

PY = sys.executable


def script(where: Path, name: str, body: str) -> str:
    """A hook command: a Python script of ``body`` (stdin's JSON is ``payload``)."""
    path = where / f"hook-{name}.py"
    path.write_text("import json, os, sys, time\npayload = json.load(sys.stdin)\n" + body + "\n")
    return f"{PY} {path}"


def marker_script(where: Path, name: str, marker: Path) -> str:
    """A hook whose only effect is to create ``marker`` (proof that it ran)."""
    return script(where, name, f"open({str(marker)!r}, 'a').write(payload['hook_event_name'])")


def entry(command: str, matcher: str = "", timeout: float | None = None) -> list[dict[str, object]]:
    hook: dict[str, object] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return [{"matcher": matcher, "hooks": [hook]}]


def write_settings(path: Path, hooks: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def project_settings(workspace: Path) -> Path:
    return workspace / ".zcoder" / "settings.json"


class ScriptedUser:
    """An approver that answers every command dialog with ``answers`` in turn, and keeps
    what it was shown."""

    def __init__(self, *answers: ApprovalDecision) -> None:
        self.answers = list(answers)
        self.asked: list[CommandApprovalRequest] = []

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return self.answers.pop(0)

    async def approve_edit(self, request: object) -> ApprovalDecision:
        raise AssertionError("no edit is asked about here")
