"""Other machines' agents, over the user's own OpenSSH: nothing here listens anywhere.

``zcoder agents --host [user@]host[:port]`` and ``zcoder send [user@]host[:port]:NAME`` run
the relay's own commands on that machine, through ``ssh`` as ``zcoder --connect`` does (one
command line, zcoder.base.ssh_target.ssh_argv: the user's ssh and its configuration, in
batch mode): ``zcoder agents --json`` there, or ``zcoder send --via-ssh LABEL`` there,
whose standing with its receiver is a ``zcoder send``'s (never trusted), shown as ``via SSH
from LABEL`` (zcoder.relay.via). The message travels on ssh's standard input, never in
the remote shell's command line; the name, checked here, is quoted for that shell anyway.

What comes back is the other machine's word: a listing is parsed and checked record by
record before anything is shown (escaped, as this machine's are), and every line of a
send's answer is escaped or re-encoded. When ssh fails, the failure says which: the host
could not be reached, it refused the login, its key is not the one known, or zcoder is
not installed there.

``ZCODER_REMOTE_ZCODER`` names the remote zcoder program (default ``zcoder``; e.g.
``~/.local/bin/zcoder`` when the login shell of commands ssh runs has no such PATH).
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import socket
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from zcoder.base.errors import ZcoderError
from zcoder.base.sanitize import field_for_model, visible
from zcoder.base.ssh_target import Target, TargetError, ssh_argv
from zcoder.relay.client import Peer
from zcoder.relay.display import peer_list_for_model
from zcoder.relay.protocol import STATES, FrameError, decode_flat_object, is_instance_id
from zcoder.relay.registry import MAX_MANIFESTS_EXAMINED
from zcoder.relay.via import client_label
from zcoder.settings_file import load_settings_file

REMOTE_ZCODER_SETTING: Final = "ZCODER_REMOTE_ZCODER"
DEFAULT_REMOTE_ZCODER: Final = "zcoder"
LIST_TIMEOUT: Final = 30.0  # seconds a whole listing over ssh may take
SEND_TIMEOUT: Final = 60.0  # seconds a send may take beyond what it waits for
MAX_ANSWER_BYTES: Final = 1 << 20  # a listing or a send's answer larger is not zcoder's
MAX_FIELD_CHARS: Final = 4096  # a record's text member (a workspace path at most)
STDERR_SHOWN: Final = 3  # ssh's last lines, when they say why it failed
STDERR_KEPT: Final = 8192  # bytes of a remote command's standard error kept

# A name as ``zcoder send`` takes it there: a name, name#pid or an instance id; never an
# option (no leading "-") nor anything a shell reads.
_REMOTE_NAME: Final = re.compile(r"[\w.][\w.-]*(?:#\d{1,10})?")
MAX_REMOTE_NAME_CHARS: Final = 140


class HostError(ZcoderError):
    """The other machine could not be asked, or its answer is not zcoder's (says which)."""


def remote_zcoder(env: Mapping[str, str]) -> str:
    """The remote zcoder program, as the remote shell runs it."""
    return (env.get(REMOTE_ZCODER_SETTING) or DEFAULT_REMOTE_ZCODER).strip() or "zcoder"


def parse_host(text: str, what: str = "--host") -> Target:
    """``[user@]host[:port]`` (no path): a TargetError, a usage error, otherwise."""
    return Target.parse(text, what=what, with_path=False)


def is_remote_target(text: str) -> bool:
    """Whether a ``zcoder send`` TARGET names another machine (``HOST:NAME``): a colon,
    which no instance's name or id has."""
    return ":" in text


def split_remote_target(text: str) -> tuple[Target, str]:
    """``[user@]host[:port]:NAME`` as (the host, the name there). The name is what follows
    the last colon, so an IPv6 address goes in brackets (``[::1]:api``)."""
    where, _, name = text.strip().rpartition(":")
    if not where or not is_remote_name(name):
        raise TargetError(
            f"{text!r} is not [user@]host[:port]:NAME: NAME is a name, name#pid or an "
            "instance id there (e.g. me@build-box:2222:api, [::1]:api)"
        )
    return parse_host(where, what="the host in HOST:NAME"), name


def this_host_label() -> str:
    """This machine's name, as a receiver shows it (``via SSH from <label>``)."""
    return client_label(socket.gethostname())


def send_command(
    name: str, *, as_json: bool, steer: bool = False, wait: bool = False, timeout: float | None
) -> list[str]:
    """The remote ``zcoder send``'s arguments: it sends for this machine (``--via-ssh``),
    to NAME (never an option: after ``--``), the message read from standard input."""
    command = ["send", "--via-ssh", this_host_label()]
    command += ["--json"] * as_json + ["--steer"] * steer + ["--wait"] * wait
    if timeout is not None:
        command += ["--timeout", repr(timeout)]
    return [*command, "--", name, "-"]


def is_remote_name(name: str) -> bool:
    return len(name) <= MAX_REMOTE_NAME_CHARS and _REMOTE_NAME.fullmatch(name) is not None


# -- running ssh -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What the remote command said: its exit status, standard output and error."""

    returncode: int
    stdout: bytes
    stderr: str


def run_remote(
    target: Target,
    command: list[str],
    env: Mapping[str, str],
    *,
    stdin: bytes = b"",
    timeout: float,
) -> Answer:
    """``zcoder COMMAND...`` on ``target`` (each word quoted for the remote shell); a
    HostError when ssh cannot be run or the answer takes longer than ``timeout``."""
    argv = remote_argv(target, command, env)
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            timeout=timeout,
            env=dict(env),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise HostError(f"{target.label} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise HostError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if len(done.stdout) > MAX_ANSWER_BYTES:
        raise HostError(f"{target.label} answered more than {MAX_ANSWER_BYTES} bytes")
    return Answer(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))


class SshProcess:
    """ssh running one remote zcoder command whose standard output is read as it comes:
    the message written to its standard input and its standard error kept (bounded), each
    on a daemon thread of its own, so neither pipe may block the other."""

    def __init__(self, argv: list[str], env: Mapping[str, str], message: bytes) -> None:
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
            )
        except OSError as exc:
            raise HostError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        self._stderr = bytearray()
        self._threads = [
            threading.Thread(target=self._write, args=(message,), daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def stderr_text(self) -> str:
        return bytes(self._stderr).decode("utf-8", "replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def end(self, *, kill: bool = False) -> None:
        """Stop ssh (``kill``: at once; else asked to end): the remote command notices its
        caller is gone."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill() if kill else self.process.terminate()

    def wait(self, timeout: float = SEND_TIMEOUT) -> int:
        """ssh's exit status, killed if it does not end within ``timeout``; its threads
        joined."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        return code

    def _write(self, message: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError):  # ssh ended first: its exit status says why
            stdin.write(message)
        with contextlib.suppress(OSError):
            stdin.close()

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in stream:
                if len(self._stderr) < STDERR_KEPT:
                    self._stderr += raw[: STDERR_KEPT - len(self._stderr)]


def remote_argv(target: Target, command: list[str], env: Mapping[str, str]) -> list[str]:
    """ssh's command line: the remote zcoder program, then ``command``'s words quoted."""
    words = " ".join(shlex.quote(word) for word in command)
    return ssh_argv(target, env, f"{remote_zcoder(env)} {words}")


def ssh_failure(target: Target, returncode: int, stderr: str) -> str | None:
    """Why the command did not run there, said for the user; None when it ran (its own
    exit status and words are then the remote zcoder's)."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = visible("; ".join(said[-STDERR_SHOWN:]))
    host = target.label
    if returncode == 255:  # ssh's own failure: the remote command never ran, or was cut
        text = stderr.lower()
        if "permission denied" in text or "too many authentication failures" in text:
            return (
                f"{host} refused the login (authentication failed: {last}); zcoder runs ssh "
                "in batch mode, so a key or an agent is needed, never a password"
            )
        if "host key verification failed" in text or "host identification has changed" in text:
            return (
                f"{host}'s host key is not the one known (host key verification failed); "
                f"connect once with ssh by hand to check and accept it ({last})"
            )
        if any(
            words in text
            for words in (
                "could not resolve",
                "connection refused",
                "no route to host",
                "timed out",
                "network is unreachable",
                "name or service not known",
            )
        ):
            return f"{host} could not be reached ({last})"
        return f"ssh to {host} failed ({last or 'exit status 255'})"
    if returncode == 127:
        return (
            f"zcoder is not installed on {host}, or not on the PATH of the shell ssh runs "
            f"there ({last}); name it with {REMOTE_ZCODER_SETTING} (e.g. ~/.local/bin/zcoder)"
        )
    if returncode == 126:
        return f"the zcoder on {host} cannot be run ({last})"
    if returncode < 0:
        return f"ssh to {host} was ended by signal {-returncode}"
    return None


# -- a listing ------------------------------------------------------------------------------

_TEXT: Final = (
    "name",
    "project",
    "workspace",
    "profile",
    "model",
    "session_id",
    "activity",
    "tmux_pane",
    "last_receipt",
)
_REQUIRED: Final = ("name", "project", "pid", "state", "instance_id", "workspace")
_COUNTS: Final = ("activity_since", "last_receipt_at")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def checked_record(record: object) -> dict[str, Any]:
    """One record of ``zcoder agents --json``, its members of their types and bounds; a
    ValueError saying which is not."""
    if not isinstance(record, dict):
        raise ValueError("a record is not an object")
    for key in _REQUIRED:
        if key not in record:
            raise ValueError(f"a record has no {key}")
    for key in _TEXT:
        value = record.get(key, "")
        if not isinstance(value, str) or len(value) > MAX_FIELD_CHARS:
            raise ValueError(f"{key} is not a string of at most {MAX_FIELD_CHARS} characters")
    if not record["project"] or not record["workspace"] or not record["name"]:
        raise ValueError("a record's name, project or workspace is empty")
    if not is_instance_id(record["instance_id"]):
        raise ValueError("instance_id is not an instance id")
    if not _is_count(record["pid"]) or record["pid"] == 0:
        raise ValueError("pid is not a positive integer")
    if record["state"] not in STATES:
        raise ValueError(f"state is not one of {', '.join(STATES)}")
    for key in _COUNTS:
        if not _is_count(record.get(key, 0)):
            raise ValueError(f"{key} is not a count")
    queued = record.get("queued")
    if queued is not None and not _is_count(queued):
        raise ValueError("queued is not a count")
    return {key: record[key] for key in record}


def parse_listing(data: bytes, host: str) -> list[dict[str, Any]]:
    """The records of a ``zcoder agents --json`` answer; a HostError when it is not one."""
    try:
        records = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HostError(f"the answer of {host} is not zcoder agents --json (not JSON: {exc})")
    if not isinstance(records, list):
        raise HostError(f"the answer of {host} is not zcoder agents --json (not a list)")
    if len(records) > MAX_MANIFESTS_EXAMINED:
        raise HostError(f"{host} listed more than {MAX_MANIFESTS_EXAMINED} agents")
    try:
        return [checked_record(record) for record in records]
    except ValueError as exc:
        raise HostError(f"the answer of {host} is not zcoder agents --json ({exc})") from None


def peer_from(record: Mapping[str, Any], host: str) -> Peer:
    """A checked record as a peer listed on ``host`` (what the display functions show)."""
    return Peer(
        instance_id=record["instance_id"],
        pid=record["pid"],
        project=record["project"],
        workspace=record["workspace"],
        session_id=record.get("session_id", ""),
        profile=record.get("profile", ""),
        model=record.get("model", ""),
        socket="",
        state=record["state"],
        started_at=0,
        name=record["name"],
        activity=record.get("activity", ""),
        activity_since=record.get("activity_since", 0),
        tmux_pane=record.get("tmux_pane", ""),
        queued=record.get("queued"),
        last_receipt=record.get("last_receipt", ""),
        last_receipt_at=record.get("last_receipt_at", 0),
        host=host,
    )


def list_host(
    target: Target, env: Mapping[str, str], timeout: float = LIST_TIMEOUT
) -> list[dict[str, Any]]:
    """The checked records of ``zcoder agents --json`` on ``target``; a HostError saying
    why there are none to show."""
    answer = run_remote(target, ["agents", "--json"], env, timeout=timeout)
    failure = ssh_failure(target, answer.returncode, answer.stderr)
    if failure is not None:
        raise HostError(failure)
    if answer.returncode != 0:
        said = visible("; ".join(answer.stderr.split("\n")[-STDERR_SHOWN:]).strip("; "))
        raise HostError(
            f"zcoder agents on {target.label} failed with status {answer.returncode}"
            + (f": {said}" if said else "")
        )
    return parse_listing(answer.stdout, target.label)


def host_peers(target: Target, env: Mapping[str, str]) -> list[Peer]:
    """The live agents of ``target``, as peers that name their host."""
    return [peer_from(record, target.label) for record in list_host(target, env)]


# -- for the model: the hosts the user listed, and one send without a wait --------------------

HOSTS_KEY: Final = "relay"  # settings.json: {"relay": {"hosts": ["me@gpu-box", ...]}}


@dataclass(frozen=True)
class ListedHosts:
    """``relay.hosts`` of ``$ZCODER_HOME/settings.json``: the machines whose agents the
    model may list and send to, and what was wrong with the entries left out."""

    targets: tuple[Target, ...] = ()
    problems: tuple[str, ...] = ()


def listed_hosts(home: Path) -> ListedHosts:
    """The hosts the user listed (none when the file or the key is absent)."""
    found = load_settings_file(home)
    section = found.data.get(HOSTS_KEY, {})
    raw = section.get("hosts", []) if isinstance(section, dict) else None
    if not isinstance(raw, list):
        return ListedHosts((), (f"{found.path}: relay.hosts must be a list of hosts",))
    targets: list[Target] = []
    problems: list[str] = []  # the file's own warnings are the settings loader's to show
    for entry in raw:
        try:
            target = parse_host(str(entry) if isinstance(entry, str) else "", "relay.hosts")
        except TargetError as exc:
            problems.append(f"{found.path}: {exc}; left out")
            continue
        if target not in targets:
            targets.append(target)
    return ListedHosts(tuple(targets), tuple(problems))


@dataclass(frozen=True)
class HostSendResult:
    """What the remote ``zcoder send --json`` answered: its status (None: not delivered),
    its words, and the message id."""

    status: str | None
    text: str
    message_id: str | None = None


def send_record(first: bytes, target: Target, returncode: int, stderr: str) -> HostSendResult:
    """The remote ``zcoder send --json``'s first line read (empty: nothing was sent there,
    and its standard error says why); a HostError when it is not zcoder send's."""
    if not first.strip():
        said = visible("; ".join(line for line in stderr.splitlines() if line))
        return HostSendResult(None, said or f"zcoder send there exited with {returncode}")
    try:
        record = dict(decode_flat_object(first))
    except FrameError as exc:
        raise HostError(f"the answer of {target.label} is not zcoder send's ({exc})") from None
    status, text, message_id = record.get("status"), record.get("text"), record.get("message_id")
    return HostSendResult(
        status if isinstance(status, str) else None,
        text if isinstance(text, str) else "",
        message_id if isinstance(message_id, str) else None,
    )


def host_listing_for_model(target: Target, env: Mapping[str, str]) -> str:
    """``list_agents``' words for one listed host: its agents as this machine's are given
    (self-reported, escaped, bounded), under a heading that says how to send there."""
    label = target.label
    try:
        peers = host_peers(target, env)
    except HostError as exc:
        return f"On {label}: not available ({field_for_model(str(exc))})"
    if not peers:
        return f"On {label}, over SSH: no zcoder instances."
    return f"On {label}, over SSH (send to {label}:NAME):\n{peer_list_for_model(peers)}"
