"""A zcoder attached to a shared ``--gguf`` server names its slot in every request
(llama.cpp's ``id_slot``, with ``cache_prompt``), so its prompt stays in that slot's cache;
a client without a slot sends the body it always sent. The fake OpenAI-compatible server
records the bodies."""

from __future__ import annotations

from tests.fixtures.fake_ollama import Turn
from tests.fixtures.fake_openai import FakeOpenAI
from tests.fixtures.model_clients import collect
from zcoder.model import OpenAIClient
from zcoder.model.backends import make_client


async def test_a_client_with_a_slot_names_it_in_each_request(openai_fake: FakeOpenAI) -> None:
    openai_fake.enqueue(Turn.text("one"), Turn.text("two"))
    async with OpenAIClient(openai_fake.base_url, id_slot=2) as slotted:
        await collect(slotted)
    async with OpenAIClient(openai_fake.base_url) as plain:
        await collect(plain)
    pinned, free = openai_fake.chat_bodies
    assert (pinned["id_slot"], pinned["cache_prompt"]) == (2, True)
    assert "id_slot" not in free and "cache_prompt" not in free
    assert {k: v for k, v in pinned.items() if k not in ("id_slot", "cache_prompt")} == free


def test_make_client_gives_the_embedded_slot_to_the_openai_client() -> None:
    class Settings:
        backend = "openai"
        host = "http://127.0.0.1:11434"
        base_url = "http://127.0.0.1:8080/v1"
        api_key = None
        max_line_bytes = 1000
        max_reply_bytes = 5000
        embedded_slot = 1

    made = make_client(Settings())
    assert isinstance(made, OpenAIClient) and made.id_slot == 1
