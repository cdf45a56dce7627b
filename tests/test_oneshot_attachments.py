"""``@path`` and the instruction files in ``--prompt``: the file goes to the model, what was
attached (or refused) is said on stderr made safe for a terminal, and
``--print-instructions`` lists the files, their sizes and what was not read."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.images import png_bytes
from tests.test_oneshot import Env, make_env, prompt, zcoder


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def test_an_at_file_is_attached_and_said_on_stderr(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("It prints beta."))
    done = prompt(env, fake, "what does @beta.py print? ask me@example.com")
    assert done.returncode == 0, done.stderr
    sent = fake.chat_bodies[0]["messages"][-1]["content"]
    assert sent.startswith("what does @beta.py print? ask me@example.com\n\n")
    assert "print('beta')" in sent
    assert "[zcoder] 📎 beta.py (14 bytes, 1 line)" in done.stderr
    assert "example.com" not in done.stderr  # an address is no attachment


def test_a_hostile_file_name_is_shown_escaped(env: Env, fake: FakeOllama) -> None:
    (env.workspace / "e\x1b[2Jvil.txt").write_text("x\n")
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "see @e\x1b[2Jvil.txt")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr
    assert "📎 e\\e[2Jvil.txt (2 bytes, 1 line)" in done.stderr


def test_print_instructions_lists_files_and_what_was_not_read(env: Env) -> None:
    (env.workspace / "AGENTS.md").write_text("Rules. See @../../etc/passwd and @docs.md\n")
    (env.workspace / "docs.md").write_text("Docs.\n")
    done = zcoder(env, "--print-instructions", "-w", str(env.workspace))
    assert done.returncode == 0, done.stderr
    assert "Rules." in done.stdout and "Docs." in done.stdout and "root:" not in done.stdout
    assert f"1. {env.workspace / 'AGENTS.md'} (42 bytes)" in done.stderr
    assert f"2. {env.workspace / 'docs.md'} (6 bytes) · imported by" in done.stderr
    assert "passwd: it leads outside the repository" in done.stderr


def test_an_image_path_in_the_prompt_reaches_a_vision_model(env: Env, fake: FakeOllama) -> None:
    fake.vision = True
    (env.workspace / "shot.png").write_bytes(png_bytes(3, 2))
    fake.enqueue(Turn.text("A red square."))
    done = prompt(env, fake, "what is in ./shot.png?")
    assert done.returncode == 0, done.stderr
    sent = fake.chat_bodies[0]["messages"][-1]
    assert sent["images"] == [base64.b64encode(png_bytes(3, 2)).decode()]
    assert "[zcoder] 🖼 shot.png (3x2, 73 bytes)" in done.stderr


def test_an_image_for_a_model_without_vision_is_said_and_not_sent(
    env: Env, fake: FakeOllama
) -> None:
    (env.workspace / "shot.png").write_bytes(png_bytes(3, 2))
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "what is in shot.png?")
    assert done.returncode == 0, done.stderr
    assert "images" not in fake.chat_bodies[0]["messages"][-1]
    assert "does not take images; set ZCODER_VISION=on" in done.stderr
