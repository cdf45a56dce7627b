"""Images from an editor: initialize offers them only when the model takes them, an image
block reaches the model base64, and a bad one is refused with a clear error, nothing run."""

from __future__ import annotations

import asyncio
import base64

import pytest
from acp import image_block, text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.images import png_bytes
from tests.test_oneshot import Env
from zcoder.acp.prompts import PromptBlock

B64 = base64.b64encode(png_bytes(3, 2)).decode("ascii")


@pytest.mark.parametrize("vision", [True, False])
async def test_initialize_offers_images_only_when_the_model_takes_them(
    env: Env, fake: FakeOllama, vision: bool
) -> None:
    fake.vision = vision
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        answer = await asyncio.wait_for(conn.initialize(protocol_version=1), WAIT_SECONDS)
    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.image is vision


async def test_an_image_block_reaches_the_model_and_is_shown(env: Env, fake: FakeOllama) -> None:
    fake.vision = True
    fake.enqueue(Turn.text("A red square."))
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        blocks: list[PromptBlock] = [
            text_block("what is this?"),
            image_block(B64, "image/png", uri="file:///tmp/shot.png"),
        ]
        done = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks), 20)
    assert done.stop_reason == "end_turn"
    (body,) = fake.chat_bodies
    sent = body["messages"][-1]
    assert sent["images"] == [B64]
    assert sent["content"] == "what is this?\n\n[zcoder] Attached by the user with @:\n\n" + (
        "[image: shot.png, 3x2]"
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("not base64!", "shot.png is not base64 data"),
        (base64.b64encode(b"hello").decode(), "shot.png is not a PNG, JPEG, GIF or WebP image"),
    ],
)
async def test_a_bad_image_block_is_refused_and_nothing_is_asked(
    env: Env, fake: FakeOllama, data: str, why: str
) -> None:
    fake.vision = True
    async with acp_zcoder(env, fake, RecordingClient()) as (conn, _):
        session_id = await new_session(conn, env)
        blocks: list[PromptBlock] = [
            text_block("what?"),
            image_block(data, "image/png", uri="shot.png"),
        ]
        with pytest.raises(Exception, match="Invalid params") as raised:
            await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks), 20)
    assert why in str(getattr(raised.value, "data", raised.value))
    assert fake.chat_bodies == []
