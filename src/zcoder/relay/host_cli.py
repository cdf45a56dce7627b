"""``zcoder agents --host HOST`` and ``zcoder send HOST:NAME``: the relay's commands run on
another machine over ssh (zcoder.relay.hosts), their answers shown here as this machine's
are: a listing as the same table (or the same JSON, checked, each record with its
``host``), a send's lines as they come (each escaped, or in ``--json`` checked and
re-encoded), and its exit status, which is the remote ``zcoder send``'s; or
EXIT_HOST_FAILED, with which failure it was, when ssh or the remote zcoder could not
answer."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Final, TextIO

from zcoder.base.errors import EXIT_INTERRUPTED, EXIT_USAGE
from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.base.ssh_target import TargetError
from zcoder.relay.display import peer_table
from zcoder.relay.hosts import (
    MAX_ANSWER_BYTES,
    SEND_TIMEOUT,
    HostError,
    SshProcess,
    list_host,
    parse_host,
    peer_from,
    remote_argv,
    send_command,
    split_remote_target,
    ssh_failure,
)
from zcoder.relay.protocol import FrameError, decode_flat_object

EXIT_HOST_FAILED: Final = 16  # ssh failed, zcoder is missing there, or its answer is not one
REMOTE_CODES: Final = range(16)  # every exit status the remote zcoder send gives


def agents_on_host(
    text: str, as_json: bool, *, out: TextIO, err: TextIO, env: Mapping[str, str]
) -> int:
    """``zcoder agents --host [user@]host[:port] [--json]``."""
    try:
        target = parse_host(text)
    except TargetError as exc:
        print(f"zcoder agents: {visible(str(exc))}", file=err)
        return EXIT_USAGE
    try:
        records = list_host(target, env)
    except HostError as exc:
        print(f"zcoder agents: {visible(str(exc))}", file=err)
        return EXIT_HOST_FAILED
    if as_json:
        out.write(json_text([{**record, "host": target.label} for record in records], indent=2))
        out.write("\n")
    elif not records:
        print(f"No zcoder instances are available on {visible(target.label)}.", file=out)
    else:
        out.write(peer_table([peer_from(record, target.label) for record in records]) + "\n")
    return 0


@dataclass(frozen=True)
class HostSend:
    """What ``zcoder send HOST:NAME`` asks the remote ``zcoder send`` for."""

    as_json: bool = False
    steer: bool = False
    wait: bool = False
    timeout: float | None = None


def send_to_host(
    text: str,
    message: str,
    how: HostSend,
    *,
    out: TextIO,
    err: TextIO,
    env: Mapping[str, str],
) -> int:
    """``zcoder send [user@]host[:port]:NAME``: the message on ssh's standard input, the
    remote ``zcoder send``'s lines shown as they come, its exit status returned."""
    try:
        target, name = split_remote_target(text)
    except TargetError as exc:
        print(f"zcoder send: {visible(str(exc))}; nothing was sent", file=err)
        return EXIT_USAGE
    command = send_command(
        name, as_json=how.as_json, steer=how.steer, wait=how.wait, timeout=how.timeout
    )
    argv = remote_argv(target, command, env)
    # Without --wait (or with --timeout) the whole exchange has a deadline; a wait for a
    # receipt with no timeout lasts as long as the connection (ssh's keep-alives end it).
    limit = None if how.wait and how.timeout is None else (how.timeout or 0) + SEND_TIMEOUT
    try:
        ssh = SshProcess(argv, env, message.encode("utf-8"))
    except HostError as exc:
        print(f"zcoder send: {visible(str(exc))}", file=err)
        return EXIT_HOST_FAILED
    exchange = _Exchange(ssh, limit)
    try:
        bad = _relay_lines(ssh.stdout, how.as_json, out)
    except KeyboardInterrupt:
        exchange.abandon()  # the zcoder send there stops waiting once ssh is gone
        print("zcoder send: interrupted (the lines above say what was done)", file=err)
        return EXIT_INTERRUPTED
    except BaseException:
        exchange.abandon()
        raise
    code = exchange.finish()
    if exchange.timed_out:
        print(f"zcoder send: {visible(target.label)} did not answer within {limit:g} s", file=err)
        return EXIT_HOST_FAILED
    failure = ssh_failure(target, code, exchange.stderr_text)
    if failure is None and code == EXIT_USAGE and "--via-ssh" in exchange.stderr_text:
        failure = (
            f"the zcoder on {target.label} is too old to take messages from other machines "
            "(it does not know --via-ssh): update it there"
        )
    if failure is None and bad is not None:
        failure = f"the answer of {target.label} is not zcoder send's ({bad})"
    if failure is None and code not in REMOTE_CODES:
        failure = f"zcoder send on {target.label} ended with status {code}"
    if failure is not None:
        print(f"zcoder send: {visible(failure)}", file=err)
        return EXIT_HOST_FAILED
    if exchange.stderr_text:  # the remote zcoder send's own words (why it refused...)
        print(screen_safe(exchange.stderr_text.rstrip("\n")), file=err)
    return code


class _Exchange:
    """One send's ssh (its pipes read and written on threads of its own: SshProcess),
    killed at the deadline."""

    def __init__(self, ssh: SshProcess, limit: float | None) -> None:
        self.ssh = ssh
        self.timed_out = False
        self._timer = None if limit is None else threading.Timer(limit, self._expire)
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    @property
    def stderr_text(self) -> str:
        return self.ssh.stderr_text

    def _expire(self) -> None:
        if self.ssh.running():
            self.timed_out = True
            self.ssh.end(kill=True)

    def abandon(self) -> None:
        """End ssh now (the caller stops: Ctrl+C), and reap it."""
        self.ssh.end(kill=True)
        self.finish()

    def finish(self) -> int:
        """Wait for ssh to end (killed when the caller stops early); its exit status."""
        if not self.ssh.stdout.closed:
            self.ssh.stdout.close()
        code = self.ssh.wait()
        if self._timer is not None:
            self._timer.cancel()
        return code


def _relay_lines(stream: IO[bytes] | None, as_json: bool, out: TextIO) -> str | None:
    """Show each line of the remote answer as it comes: escaped, or (``--json``) checked
    to be one flat JSON object and re-encoded. Why the answer is not zcoder send's (the
    rest is not shown), or None."""
    assert stream is not None
    total = 0
    for raw in stream:
        total += len(raw)
        if total > MAX_ANSWER_BYTES:
            return f"more than {MAX_ANSWER_BYTES} bytes"
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if as_json:
            try:
                record = dict(decode_flat_object(line.encode("utf-8")))
            except FrameError as exc:
                return f"a line is not a JSON object of scalars: {exc}"
            out.write(json_text(record) + "\n")
        else:
            out.write(screen_safe(line) + "\n")
        out.flush()
    return None
