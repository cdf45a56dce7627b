"""Fixtures for the tool tests: a real workspace in tmp_path, contexts and approvers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.approver import ScriptedApprover
from zcoder.tools import (
    ApprovalPolicy,
    CommandPolicy,
    Profile,
    ToolContext,
    TurnOrigin,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("outside secret\n")
    return out.resolve()


MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def make_ctx(workspace: Path) -> MakeCtx:
    def make(
        *,
        profile: Profile = Profile.CODING,
        origin: TurnOrigin = TurnOrigin.USER,
        policy: CommandPolicy = CommandPolicy.ALLOW,
        approver: ScriptedApprover | None = None,
        approval: ApprovalPolicy | None = None,
        max_output: int = 32768,
    ) -> ToolContext:
        return ToolContext(
            workspace=workspace,
            profile=profile,
            origin=origin,
            approval=approval or ApprovalPolicy(policy, profile),
            approver=approver or ScriptedApprover(),
            max_output=max_output,
        )

    return make


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
