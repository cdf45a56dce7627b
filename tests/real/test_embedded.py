"""``zcoder --gguf``: the embedded llama.cpp server's start, failure and exit, for real.

The real model file (SmolLM2's GGUF) is started through the real launcher; the failures
are real files (not GGUF, cut short, larger than the memory left); the exit is zcoder
killed with SIGKILL, after which its server must be gone too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from tests.fixtures.shared_model import zombie
from tests.test_oneshot import make_env
from zcoder.model.embedded import (
    EmbeddedError,
    plan_launch,
    start_embedded,
)
from zcoder.model.gguf import read_gguf_info

pytestmark = pytest.mark.timeout(300)


def test_the_plan_is_sized_from_the_file_and_the_machine(gguf: Path) -> None:
    info = read_gguf_info(gguf)
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert info.template_takes_tools is False  # SmolLM2's own template

    plan = plan_launch(gguf, threads=1)
    assert plan.n_ctx == 8192  # the trained window, within the cap
    assert plan.template is not None and "<tool_call>" in plan.template  # zcoder's
    assert plan_launch(gguf, window=2048).n_ctx == 2048  # --context-window wins
    assert plan_launch(gguf).threads >= 1


def test_the_embedded_server_starts_with_a_template_that_takes_tools(
    gguf: Path, tmp_path: Path
) -> None:
    plan = plan_launch(gguf, window=2048, threads=1)
    with start_embedded(plan, log_path=tmp_path / "server.log") as server:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{server.url}/props", timeout=10) as response:
            props = json.load(response)
        assert props["chat_template_caps"]["supports_tools"] is True
        assert props["default_generation_settings"]["n_ctx"] == 2048
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as response:
            (model,) = json.load(response)["data"]
        assert model["id"] == "SmolLM2-135M-Instruct.Q4_1"
        pid = server.pid
    assert not server.alive()
    assert not Path(f"/proc/{pid}").exists() or zombie(pid)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is not a model\n" * 10, "is not a GGUF model file"),
        (b"GGUF\x03\x00\x00\x00\x01", "is cut short"),
    ],
)
def test_a_bad_file_is_one_clear_line_and_no_traceback(
    tmp_path: Path, content: bytes, said: str
) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(content)
    env = make_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "zcoder", "--gguf", str(bad), "--prompt", "hi"],
        env=env.vars,
        cwd=env.workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("zcoder: --gguf: ")
    assert said in line


def test_a_file_that_llama_cpp_refuses_is_reported_with_its_reason(
    gguf: Path, tmp_path: Path
) -> None:
    # A real GGUF header whose tensors are missing: zcoder's reading passes, llama.cpp's fails.
    cut = tmp_path / "cut.gguf"
    with gguf.open("rb") as source:
        cut.write_bytes(source.read(4 << 20))
    plan = plan_launch(cut, threads=1)
    home = tmp_path / "home"  # $ZCODER_HOME, made by the launch: private as always
    log = home / "server.log"
    with pytest.raises(EmbeddedError) as caught:
        start_embedded(plan, log_path=log, timeout=120)
    message = str(caught.value)
    assert "llama.cpp could not load" in message
    assert str(log) in message  # where the whole log is
    assert (home.stat().st_mode & 0o777, log.stat().st_mode & 0o777) == (0o700, 0o600)


def test_a_model_larger_than_the_free_memory_is_refused_before_starting(gguf: Path) -> None:
    size = gguf.stat().st_size
    with pytest.raises(EmbeddedError, match="not enough memory for SmolLM2"):
        plan_launch(gguf, memory=size // 2)


def test_the_server_dies_with_zcoder_even_when_zcoder_is_killed(gguf: Path, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    variables = {**env.vars, "ZCODER_GGUF": str(gguf), "ZCODER_RELAY": "off"}
    variables.update(ZCODER_CONTEXT_WINDOW="2048", ZCODER_STDIN_WAIT="600")
    # --prompt - waits for its standard input, which stays open: zcoder is running.
    zcoder = subprocess.Popen(
        [sys.executable, "-m", "zcoder", "--prompt", "-"],
        env=variables,
        cwd=env.workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        child = wait_until(lambda: _embedded_child(zcoder.pid), timeout=120, what="the server")
        os.kill(zcoder.pid, signal.SIGKILL)
        zcoder.wait(30)
        wait_until(
            lambda: not Path(f"/proc/{child}").exists() or zombie(child),
            timeout=30,
            what="the embedded server to exit after zcoder",
        )
    finally:
        if zcoder.poll() is None:
            zcoder.kill()
            zcoder.wait(30)
        assert zcoder.stdin is not None and zcoder.stderr is not None
        zcoder.stdin.close()
        zcoder.stderr.close()


def _embedded_child(parent: int) -> int | None:
    """The pid of ``parent``'s embedded server process, once it is listening."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"zcoder.model.embedded_child" in command:
            return int(entry.name) if _listening(entry) else None
    return None


def _listening(process: Path) -> bool:
    """Whether the process holds a listening TCP socket (its fds against net/tcp)."""
    try:
        inodes = {
            os.readlink(fd).removeprefix("socket:[").removesuffix("]")
            for fd in (process / "fd").iterdir()
        }
        table = (process / "net" / "tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(row.split()[3] == "0A" and row.split()[9] in inodes for row in table)
