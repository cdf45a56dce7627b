"""An image the user attaches reaches a vision server in both wire formats, is withheld
with a notice from a model that does not take images, survives a resume without riding
in the session store, and stops being resent after its prompts."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, cast

import pytest

from tests.agent.support import Harness, make_agent, resumed_agent
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from tests.fixtures.images import png_bytes
from zcoder.agent import Notice, Outcome
from zcoder.agent.image_book import IMAGES_KEY, RESEND_PROMPTS
from zcoder.model import OllamaClient, OpenAIClient
from zcoder.sessions import SessionData, SessionStore

PNG = png_bytes(3, 2)
B64 = base64.b64encode(PNG).decode("ascii")
TAG = "[image: shot.png, 3x2]"


@pytest.fixture
def shot(workspace: Path) -> Path:
    (workspace / "shot.png").write_bytes(PNG)
    return workspace / "shot.png"


def last_user(body: dict[str, Any]) -> dict[str, Any]:
    users: list[dict[str, Any]] = [m for m in body["messages"] if m["role"] == "user"]
    return users[-1]


def notices(harness: Harness) -> list[str]:
    return [event.text for event in harness.log.of(Notice)]


async def test_ollama_gets_the_image_base64_on_the_users_message(
    harness: Harness, fake: FakeOllama, shot: Path
) -> None:
    fake.vision = True
    fake.enqueue(Turn.text("A red square."))
    finished = await harness.agent.run_user_turn("what is in shot.png?")
    assert finished.outcome is Outcome.COMPLETE
    (body,) = fake.chat_bodies
    sent = last_user(body)
    assert sent["images"] == [B64]
    assert sent["content"].startswith("what is in shot.png?") and sent["content"].endswith(TAG)
    assert IMAGES_KEY not in sent  # the reference is zcoder's, never the server's
    assert "🖼 shot.png (3x2, 73 bytes)" in notices(harness)
    assert harness.agent.user_ledger == ["what is in shot.png?"]


async def test_an_openai_compatible_server_gets_an_image_url_part(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, shot: Path
) -> None:
    openai_fake.vision = True
    openai_fake.enqueue(Turn.text("A red square."))
    agent, _log, _ = make_agent(openai_client, store, shot.parent)
    await agent.run_user_turn("what is in shot.png?")
    (body,) = openai_fake.chat_bodies
    text, image = last_user(body)["content"]
    assert text["type"] == "text" and text["text"].startswith("what is in shot.png?")
    assert text["text"].endswith(TAG)
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}


async def test_a_server_that_does_not_say_gets_no_image_and_the_user_is_told_why(
    openai_fake: FakeOpenAI, openai_client: OpenAIClient, store: SessionStore, shot: Path
) -> None:
    openai_fake.enqueue(Turn.text("I cannot see it."))
    agent, log, _ = make_agent(openai_client, store, shot.parent)
    await agent.run_user_turn("what is in shot.png?")
    (body,) = openai_fake.chat_bodies
    content = last_user(body)["content"]
    assert isinstance(content, str) and B64 not in json.dumps(body)
    assert content.endswith("[image: shot.png, 3x2, not sent: the model does not take images]")
    assert [event.text for event in log.of(Notice)][-1] == (
        "🖼 shot.png (3x2, 73 bytes) was not sent: the server does not say whether "
        "qwen3-coder takes images; set ZCODER_VISION=on to send images anyway"
    )


async def test_ollama_saying_no_vision_gets_no_image_unless_the_user_overrides(
    harness: Harness, fake: FakeOllama, shot: Path
) -> None:
    fake.enqueue(Turn.text("no"), Turn.text("yes"))
    await harness.agent.run_user_turn("see shot.png")
    assert "images" not in last_user(fake.chat_bodies[0])
    assert notices(harness)[-1].endswith(
        "was not sent: the server says qwen3-coder does not take images; set "
        "ZCODER_VISION=on to send images anyway"
    )
    harness.agent.settings.vision = True  # ZCODER_VISION=on
    await harness.agent.run_user_turn("and now shot.png?")
    assert last_user(fake.chat_bodies[1])["images"] == [B64]


async def test_an_image_is_resent_for_its_prompts_then_replaced_by_its_tag(
    harness: Harness, fake: FakeOllama, shot: Path
) -> None:
    fake.vision = True
    prompts = 2 + RESEND_PROMPTS
    fake.enqueue(*(Turn.text(f"reply {n}") for n in range(prompts)))
    await harness.agent.run_user_turn("look at shot.png")
    for n in range(1, prompts):
        await harness.agent.run_user_turn(f"more {n}")
    carried = ["images" in body["messages"][1] for body in fake.chat_bodies]
    assert carried == [True] * (1 + RESEND_PROMPTS) + [False]
    assert fake.chat_bodies[-1]["messages"][1]["content"].endswith(
        "[image: shot.png, 3x2, not resent]"
    )


async def attached_and_saved(harness: Harness, fake: FakeOllama) -> SessionData:
    """A vision model's turn on ``look at shot.png``, then one more scripted; the session."""
    fake.vision = True
    fake.enqueue(Turn.text("red"), Turn.text("again"))
    await harness.agent.run_user_turn("look at shot.png")
    return cast(SessionData, harness.load())


async def test_an_image_survives_a_resume_and_the_store_holds_no_bytes(
    harness: Harness, fake: FakeOllama, client: OllamaClient, shot: Path
) -> None:
    data = await attached_and_saved(harness, fake)
    assert B64 not in json.dumps(data.messages)  # a reference, not the bytes
    kept = harness.store.home / "images" / data.messages[0][IMAGES_KEY]["images"][0]["sha256"]
    assert kept.read_bytes() == PNG and kept.stat().st_mode & 0o777 == 0o600
    shot.unlink()  # the workspace's file is gone: the kept copy is sent
    again = resumed_agent(client, harness.store, harness.workspace, data)
    await again.run_user_turn("and now?")
    assert fake.chat_bodies[-1]["messages"][1]["images"] == [B64]


async def test_a_hand_edited_reference_reads_no_file_of_its_choosing(
    harness: Harness, fake: FakeOllama, client: OllamaClient, shot: Path, tmp_path: Path
) -> None:
    data = await attached_and_saved(harness, fake)
    (tmp_path / "stolen").write_bytes(PNG)
    ref = data.messages[0][IMAGES_KEY]["images"][0]
    ref["sha256"] = "../../stolen"
    again = resumed_agent(client, harness.store, harness.workspace, data)
    await again.run_user_turn("and now?")
    first = fake.chat_bodies[-1]["messages"][1]
    assert "images" not in first
    assert first["content"].endswith("[image: shot.png, 3x2, no longer kept]")
    assert B64 not in json.dumps(fake.chat_bodies[-1])


async def test_vision_off_sends_no_image_even_to_a_vision_model(
    harness: Harness, fake: FakeOllama, shot: Path
) -> None:
    fake.vision = True
    harness.agent.settings.vision = False  # ZCODER_VISION=off
    fake.enqueue(Turn.text("ok"))
    await harness.agent.run_user_turn("see shot.png")
    assert "images" not in last_user(fake.chat_bodies[0])
    assert notices(harness)[-1] == (
        "🖼 shot.png (3x2, 73 bytes) was not sent: images are turned off (ZCODER_VISION=off)"
    )
    assert not [r for r in fake.requests if r.path == "/api/show"]  # nothing to ask


async def test_a_server_that_could_not_be_asked_is_asked_again_at_the_next_image(
    harness: Harness, fake: FakeOllama, shot: Path
) -> None:
    fake.vision = True
    fake.missing.add("qwen3-coder")  # /api/show answers 404 this time
    fake.enqueue(Turn.text("no"), Turn.text("yes"))
    await harness.agent.run_user_turn("see shot.png")
    assert "images" not in last_user(fake.chat_bodies[0])
    assert "does not say whether qwen3-coder takes images" in notices(harness)[-1]
    fake.missing.clear()
    await harness.agent.run_user_turn("now shot.png?")
    assert last_user(fake.chat_bodies[1])["images"] == [B64]


async def test_images_unused_for_a_month_go_when_one_is_kept_and_nothing_else_does(
    harness: Harness, fake: FakeOllama, shot: Path, tmp_path: Path
) -> None:
    import hashlib
    import os
    import time

    from zcoder.agent.image_book import KEEP_DAYS

    kept = harness.store.home / "images"
    kept.mkdir(mode=0o700, parents=True, exist_ok=True)
    month = time.time() - (KEEP_DAYS + 1) * 86400
    old, recent = "a" * 64, "b" * 64
    for name in (old, recent, f".{'c' * 64}.1234abcd.tmp", "notes.txt"):
        (kept / name).write_bytes(b"x")
    (tmp_path / "elsewhere").write_bytes(b"keep me")
    os.symlink(tmp_path / "elsewhere", kept / ("d" * 64))
    (kept / ("e" * 64)).mkdir()
    for name in (old, f".{'c' * 64}.1234abcd.tmp", "notes.txt", "d" * 64, "e" * 64):
        os.utime(kept / name, (month, month), follow_symlinks=False)
    ours = hashlib.sha256(PNG).hexdigest()
    (kept / ours).write_bytes(PNG)  # the same image, kept a month ago: used again now
    os.utime(kept / ours, (month, month))

    fake.vision = True
    fake.enqueue(Turn.text("A red square."))
    await harness.agent.run_user_turn("what is in shot.png?")

    left = sorted(path.name for path in kept.iterdir())
    assert left == sorted([recent, "notes.txt", "d" * 64, "e" * 64, ours])
    assert (tmp_path / "elsewhere").read_bytes() == b"keep me"  # a link is not followed
    assert (kept / ours).stat().st_mtime > month + 86400  # renewed by its use
