"""``Agent.steer``, the front ends' seam for Enter while a turn runs (tui/parts/turns.py's
TurnAgent): typed words go to a steering source that takes them (the user's PendingInput)
and land at the turn's next safe point; with none, the front end is told to run them as a
prompt."""

from __future__ import annotations

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import Turn
from zcoder.agent import Steer
from zcoder.agent.steering import SteerSources
from zcoder.frontend.pending import PendingInput


async def test_steer_hands_typed_words_to_the_pending_input(harness: Harness) -> None:
    pending = PendingInput()
    harness.agent.steering = pending
    assert await harness.agent.steer("look at beta.py") is True
    assert pending.take_steers() == [Steer("look at beta.py")]

    harness.server.enqueue(Turn.text("Looked."))
    assert await harness.agent.steer("and alpha.txt") is True
    await harness.agent.run_steered_turn()  # left after a plain reply: a turn of its own
    assert harness.bodies()[0]["messages"][-1] == {"role": "user", "content": "and alpha.txt"}


async def test_steer_without_a_source_that_takes_words_says_so(harness: Harness) -> None:
    assert harness.agent.steering is None
    assert await harness.agent.steer("nowhere to go") is False
    harness.agent.steering = OnlyHandsOver()
    assert await harness.agent.steer("nowhere to go") is False


class OnlyHandsOver:
    """A steering source that takes no typed words (a relay's, say)."""

    def take_steers(self) -> list[Steer]:
        return []


async def test_steer_finds_the_users_source_among_several(harness: Harness) -> None:
    """The user's waiting input beside the peers' steering (an editor's session with the
    relay on, the TUI): typed words still reach the user's, and both are taken."""
    pending = PendingInput()
    harness.agent.steering = SteerSources(OnlyHandsOver(), SteerSources(pending))
    assert await harness.agent.steer("typed") is True
    assert harness.agent.steering.take_steers() == [Steer("typed")]
    harness.agent.steering = SteerSources(OnlyHandsOver())
    assert await harness.agent.steer("typed") is False
