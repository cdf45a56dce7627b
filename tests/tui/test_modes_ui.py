"""ModesUI alone: Shift+Tab's cycle, /mode, the header's field, the plan offered at a
plan-mode turn's end, and an agent with no ApprovalPolicy here (``--connect``'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.message import Message

from tests.tui.parts_support import part_context, services_for
from tests.tui.test_status import state
from tests.tui.test_turns import Rig
from zcoder.agent import Outcome, TurnFinished
from zcoder.tools import ApprovalPolicy, CommandPolicy, Mode, Profile
from zcoder.tui.messages import HeaderFields, ShowNotice
from zcoder.tui.parts.modes_ui import ACCEPTED_PLAN, ELSEWHERE, ModesUI
from zcoder.tui.widgets.status import header_line

pytestmark = pytest.mark.timeout(30)


class LocalAgent:
    def __init__(self) -> None:
        self.approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)


class RemoteAgent:
    """As --connect's: a turn seam, no ApprovalPolicy of this process."""


def modes(
    tmp_path: Path, agent: object, answer: bool = True
) -> tuple[ModesUI, list[Message], list[str], list[tuple[str, Mode]]]:
    services = services_for(tmp_path, tmp_path / "home")
    services.agent = agent  # type: ignore[assignment]
    posted: list[Message] = []
    queued: list[str] = []
    asked: list[tuple[str, Mode]] = []

    async def confirm(plan: str, back: Mode) -> bool:
        asked.append((plan, back))
        return answer

    part = ModesUI(part_context(services, posted), confirm_plan=confirm, queue_prompt=queued.append)
    return part, posted, queued, asked


def notices(posted: list[Message]) -> list[str]:
    return [m.text for m in posted if isinstance(m, ShowNotice)]


def header_modes(posted: list[Message]) -> list[Any]:
    return [m.changes["mode"] for m in posted if isinstance(m, HeaderFields)]


def test_shift_tab_cycles_the_agents_mode_and_tells_the_header(tmp_path: Path) -> None:
    agent = LocalAgent()
    part, posted, _, _ = modes(tmp_path, agent)
    for _ in range(3):
        part.cycle()
    assert header_modes(posted) == ["accept-edits", "plan", "ask"]
    assert agent.approval.mode is Mode.ASK


def test_shift_tab_while_init_drafts_steps_from_the_users_mode_not_its_plan(
    tmp_path: Path,
) -> None:
    agent = LocalAgent()
    part, posted, _, _ = modes(tmp_path, agent)
    with agent.approval.pinned(Mode.PLAN):  # /init's drafting turn
        part.cycle()
        part.mode_command("")
        during = agent.approval.mode
    assert during is Mode.PLAN
    assert header_modes(posted) == ["accept-edits"]
    assert notices(posted)[-1].startswith("Mode: accept edits")
    assert agent.approval.mode is Mode.ACCEPT_EDITS


def test_mode_names_the_mode_switches_it_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    agent = LocalAgent()
    part, posted, _, _ = modes(tmp_path, agent)
    part.mode_command("")
    part.mode_command("accept edits")
    part.mode_command("yolo")
    assert agent.approval.mode is Mode.ACCEPT_EDITS
    said = [m.text for m in posted if isinstance(m, ShowNotice)]
    assert said[0].startswith("Mode: ask (commands ask first")
    assert said[1].startswith("Mode: accept edits (file edits are written without asking")
    assert said[2] == "unknown mode 'yolo'; the modes are ask, accept-edits, plan"


async def test_an_accepted_plan_goes_back_to_the_mode_before_and_runs_next(
    tmp_path: Path,
) -> None:
    agent = LocalAgent()
    part, posted, queued, asked = modes(tmp_path, agent, answer=True)
    await part.offer_plan("1. step")  # not in plan mode: nothing asked
    assert asked == []
    agent.approval.switch_mode(Mode.ACCEPT_EDITS)
    agent.approval.switch_mode(Mode.PLAN)
    await part.offer_plan("1. step")
    assert asked == [("1. step", Mode.ACCEPT_EDITS)]
    assert agent.approval.mode is Mode.ACCEPT_EDITS
    assert queued == [ACCEPTED_PLAN]
    assert header_modes(posted) == ["accept-edits"]


async def test_a_refused_plan_keeps_planning_and_runs_nothing(tmp_path: Path) -> None:
    agent = LocalAgent()
    part, posted, queued, _ = modes(tmp_path, agent, answer=False)
    agent.approval.switch_mode(Mode.PLAN)
    await part.offer_plan("1. step")
    assert agent.approval.mode is Mode.PLAN and queued == []
    assert notices(posted)[-1].startswith("Still planning")


def test_a_mode_chosen_while_zcoder_starts_is_the_agents_once_it_is_made(
    tmp_path: Path,
) -> None:
    """Shift+Tab pressed before start-up made the agent (the model warming up, say) is
    kept, shown in the header at once, and given to the agent when it is made."""
    part, posted, _, _ = modes(tmp_path, None)
    part.cycle()
    part.cycle()
    assert header_modes(posted) == ["accept-edits", "plan"]
    part.mode_command("")
    assert notices(posted)[-1].startswith("Mode: plan")
    agent = LocalAgent()
    part.services.agent = agent  # type: ignore[assignment]
    part.agent_made()
    assert agent.approval.chosen_mode is Mode.PLAN and part.early == []
    # An accepted plan goes back to the mode before plan, as when switched after start-up.
    assert agent.approval.mode_before_plan is Mode.ACCEPT_EDITS
    part.agent_made()  # twice: nothing more changes
    assert agent.approval.chosen_mode is Mode.PLAN


async def test_over_connect_nothing_is_switched_and_nothing_breaks(tmp_path: Path) -> None:
    part, remote_posted, queued, asked = modes(tmp_path, RemoteAgent())
    part.cycle()
    part.mode_command("plan")
    await part.offer_plan("1. step")  # after a remote turn: not asked, no error
    assert notices(remote_posted) == [ELSEWHERE, ELSEWHERE]
    assert queued == [] and asked == [] and header_modes(remote_posted) == []


@pytest.mark.parametrize("width", [40, 60, 140])
def test_the_header_keeps_plan_and_accept_edits_and_drops_ask_first(width: int) -> None:
    def shown(mode: str) -> str:
        return header_line(state(mode=mode), width).plain

    assert "plan" in shown("plan") and "accept edits" in shown("accept-edits")
    assert (" ask " in shown("ask")) is (width == 140)
    assert " ask " not in header_line(state(mode=""), 140).plain  # --connect: none here


async def test_a_user_turn_that_ended_complete_offers_its_reply_and_no_other(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    offered: list[str] = []
    endings = [TurnFinished(Outcome.COMPLETE, "1. plan"), TurnFinished(Outcome.INCOMPLETE, "1.")]

    async def ends(_prompt: str) -> TurnFinished:
        return endings.pop(0)

    async def offer(text: str) -> None:
        offered.append(text)

    rig.agent.run_user_turn = ends  # type: ignore[method-assign, assignment]
    rig.turns.after_plan = offer
    await rig.turns.user_turn("plan it")
    await rig.turns.user_turn("plan it again")
    assert offered == ["1. plan"]


async def test_no_plan_is_offered_while_the_user_has_more_waiting_for_the_planner(
    tmp_path: Path,
) -> None:
    """A follow-up queued (or steering left) during a plan-mode turn is the user still
    planning: before, y switched the mode first and it ran there, ahead of the plan."""
    rig = Rig(tmp_path)
    offered: list[str] = []

    async def ends(_prompt: str) -> TurnFinished:
        return TurnFinished(Outcome.COMPLETE, "1. plan")

    async def offer(text: str) -> None:
        offered.append(text)

    rig.agent.run_user_turn = ends  # type: ignore[method-assign, assignment]
    rig.turns.after_plan = offer
    pending = rig.services.pending
    pending.follow_up("also check the tests")
    await rig.turns.user_turn("plan it")
    pending.hold()  # Escape held it: it waits for /queue resume, not the planner
    await rig.turns.user_turn("plan it")
    pending.resume()
    pending.pop_follow_up()
    pending.steer("and the docs")
    await rig.turns.user_turn("plan it")
    pending.take_steers()
    await rig.turns.user_turn("plan it")
    assert offered == ["1. plan", "1. plan"]
