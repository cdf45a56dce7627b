"""``zcoder --gguf`` instances on one model file share one embedded server, for real.

Real zcoder processes, the real model: the count of server processes is read from
/proc, each instance's attachment from its open files; the first instance (the one that
started the server) is killed with SIGKILL and the server stays for the others; the
last one to leave stops it.
"""

from __future__ import annotations

import json
import signal
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from tests.fixtures.shared_model import attached, end_instance, gone, instances, servers_of
from tests.test_oneshot import make_env
from zcoder.model.shared_embedded import share_dir

pytestmark = pytest.mark.timeout(400)


def _address(home: Path) -> dict[str, object]:
    (info,) = share_dir(home).glob("*.json")
    record: dict[str, object] = json.loads(info.read_text())
    return record


def _health(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/health", timeout=10) as answer:
        return bool(answer.status == 200)


def test_three_instances_share_one_server_that_outlives_the_first(
    gguf: Path, tmp_path: Path
) -> None:
    env = make_env(tmp_path)
    with instances(gguf, env.vars, env.workspace, 3) as (first, second, third):
        (server,) = servers_of(env.home)  # one model loaded, not three
        assert all(attached(p.pid) for p in (first, second, third))
        address = _address(env.home)
        assert address["pid"] == server
        assert str(address["url"]).startswith("http://127.0.0.1:")
        mode = (share_dir(env.home) / next(share_dir(env.home).glob("*.json")).name).stat()
        assert mode.st_mode & 0o777 == 0o600

        end_instance(first, signal.SIGKILL)  # the one that started it
        assert servers_of(env.home) == [server]
        assert _health(str(address["url"]))

        end_instance(second, signal.SIGKILL)
        assert servers_of(env.home) == [server]
        assert _health(str(address["url"]))

        end_instance(third)  # the last one leaves: the server goes too
        wait_until(lambda: gone(server), timeout=60, what="the server to stop")
        wait_until(
            lambda: not list(share_dir(env.home).glob("*.json")),
            timeout=30,
            what="the address to be withdrawn",
        )


def test_a_later_instance_after_the_last_left_starts_a_new_server(
    gguf: Path, tmp_path: Path
) -> None:
    env = make_env(tmp_path)
    with instances(gguf, env.vars, env.workspace, 1) as (only,):
        (first_server,) = servers_of(env.home)
        end_instance(only, signal.SIGKILL)
        wait_until(lambda: gone(first_server), timeout=60, what="the server to stop")
    with instances(gguf, env.vars, env.workspace, 2) as (again, other):
        (server,) = servers_of(env.home)
        assert server != first_server
        assert attached(again.pid) and attached(other.pid)
