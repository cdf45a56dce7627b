"""``@file`` with the real small model (SmolLM2-135M on llama.cpp): the file's content
reaches the model with the prompt, and the model uses it; the prompt as typed is what the
session's ledger keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.real.conftest import RealServer
from tests.real.test_real_oneshot import json_run
from tests.test_oneshot import Env, make_env
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(600)  # the lock on REAL_ROOT may wait for another worker

WORD = "Zanzibar"
PROMPTS = (
    "@note.txt Repeat the text of note.txt exactly.",
    "@note.txt Which city does note.txt name? Answer with the name only.",
    "@note.txt Copy the sentence in note.txt.",
    "Say the city named in @note.txt",
)
"""Phrasings tried in turn, each in a fresh session, until one brings the word back: what
a 135M model writes moves with every word of the tool catalog and with the server's
thread count (one thread under xdist on two cores: the first three then describe the
request instead, measured; the last answers "The city named in @note.txt is Zanzibar.")."""


@pytest.fixture
def env(real_root: Path) -> Env:
    return make_env(real_root)


def test_the_model_uses_an_attached_files_content(env: Env, tool_server: RealServer) -> None:
    (env.workspace / "note.txt").write_text(f"The city is {WORD}.\n")
    for prompt in PROMPTS:
        report = json_run(env, tool_server, prompt)
        # A reply cut at the output limit is a miss as well (the catalog's words moved it).
        assert report["exit_code"] == 0 or "output limit" in str(report["error"]), report
        assert "📎 note.txt (22 bytes, 1 line)" in report["notices"]
        assert report["tool_calls"] == []  # it did not have to read the file itself
        if report["exit_code"] == 0 and WORD in report["reply"]:
            break
    assert report["exit_code"] == 0 and WORD in report["reply"], report
    with SessionStore(env.home) as store:
        data = store.load(report["session_id"], env.workspace, "coding")
    assert data.user_ledger == [prompt]
    assert f"The city is {WORD}." in data.messages[0]["content"]
