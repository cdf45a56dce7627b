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
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

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
        key = {"Authorization": f"Bearer {server.key}"}
        props = _get(f"{server.url}/props", key)
        assert props["chat_template_caps"]["supports_tools"] is True
        assert props["default_generation_settings"]["n_ctx"] == 2048
        (model,) = _get(f"{server.base_url}/models", key)["data"]
        assert model["id"] == "SmolLM2-135M-Instruct.Q4_1"
        assert server.key not in Path(f"/proc/{server.pid}/cmdline").read_text()
        pid = server.pid
    assert not server.alive()
    assert not Path(f"/proc/{pid}").exists() or zombie(pid)


def _get(url: str, headers: dict[str, str]) -> dict[str, Any]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
        data: dict[str, Any] = json.load(r)
    return data


def _status(url: str, method: str = "GET", **headers: str) -> tuple[int, str | None]:
    request = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("Access-Control-Allow-Origin")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Access-Control-Allow-Origin")


def test_only_zcoder_can_use_its_server_not_another_process_nor_a_web_page(
    gguf: Path, tmp_path: Path
) -> None:
    """The server listens on loopback, which every local process and every web page the
    user opens can reach (llama.cpp answers any Origin, with credentials, by default). A
    request without the key is refused; a browser is allowed to read no answer; the
    slots' state is not served."""
    plan = plan_launch(gguf, window=2048, threads=1)
    chat = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]})
    with start_embedded(plan, log_path=tmp_path / "server.log") as server:
        bearer = f"Bearer {server.key}"
        for path in ("/v1/chat/completions", "/completion", "/props", "/v1/models", "/slots"):
            method = "POST" if "compl" in path else "GET"
            assert _status(f"{server.url}{path}", method)[0] == 401, path
            assert _status(f"{server.url}{path}", method, Authorization="Bearer x")[0] == 401
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", data=chat.encode(),
            headers={"Authorization": bearer, "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=120) as response:
            assert response.status == 200  # zcoder's own request
        assert _status(f"{server.url}/slots", Authorization=bearer)[0] != 200
        for origin in ("http://evil.example", "null"):
            status, allowed = _status(
                f"{server.base_url}/chat/completions", "OPTIONS", Origin=origin,
                **{"Access-Control-Request-Method": "POST",
                   "Access-Control-Request-Headers": "authorization, content-type"},
            )  # fmt: skip
            assert allowed not in (origin, "*"), (status, allowed)
            assert _status(f"{server.url}/props", Origin=origin)[1] not in (origin, "*")
        assert _status(f"{server.url}/health")[0] == 200  # whether it runs: no secret


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
