"""The script client docs/usage.md shows (headless use) works as shown: it is run as
written, against ``zcoder --acp`` and the fake Ollama, with ``zcoder`` found on the PATH as
a user has it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.acp.support import WAIT_SECONDS
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, sessions

DOC = Path(__file__).resolve().parents[2] / "docs" / "usage.md"


def documented_client() -> str:
    text = DOC.read_text()
    found = re.search(r"<!-- headless-client[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert found, "docs/usage.md lost its headless client"
    return found.group(1)


def test_the_documented_script_client_prints_the_reply_and_refuses_commands(
    env: Env, fake: FakeOllama, tmp_path: Path
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch ran.txt"}, id="c1")),
        Turn.text("I was not allowed to."),
    )
    script = tmp_path / "client.py"
    script.write_text(documented_client())
    variables = dict(env.vars)
    variables["OLLAMA_HOST"] = f"127.0.0.1:{fake.port}"
    # The venv's bin holds the `zcoder` script, as an installed zcoder is on the PATH.
    variables["PATH"] = f"{Path(sys.executable).parent}:{variables.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, str(script), "make a file"],
        env=variables,
        cwd=env.workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS * 2,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "I was not allowed to.\n[end_turn]\n"
    assert not (env.workspace / "ran.txt").exists()
    (data,) = sessions(env)
    assert data.user_ledger == ["make a file"]
