"""The embedded llama.cpp server's own process: ``python -m zcoder.model.embedded_child SPEC``.

llama.cpp runs in a process of its own, never in zcoder's: a model that fails to load,
runs the machine out of memory or crashes in native code takes this process down, not
zcoder (nor pytest, for the real-model tests, which start their server the same way).
zcoder.model.embedded starts it and reads one JSON line from its standard output: either
``{"url": "http://127.0.0.1:PORT", ...}`` once the server answers, or ``{"error": "..."}``
with a sentence for the user. llama.cpp's own log goes to standard error, which the
parent points at a log file.

It lives and dies with its parent: it holds the read end of a pipe (its standard input)
whose only writer is the parent, and exits as soon as that pipe reaches end of file,
which the kernel brings about when the parent exits for any reason, SIGKILL included.

A shared server (``shared`` in SPEC, zcoder.model.shared_embedded) lives instead as long
as any zcoder uses it: each user holds a shared flock on the ``users`` file, and this
process waits for the exclusive lock, which the kernel grants only once every user has
gone (exited, closed it, or been killed). The parent then only adopts it: it writes
``adopted`` on the pipe once it has published the server; a pipe closed before that (the
parent killed while the model loaded) ends this process, so no server is left unowned.

SPEC is one JSON object: ``model`` (path), ``n_ctx``, ``threads``, ``alias``, and
optionally ``template`` (a Jinja chat template's text), ``seed``, ``temperature`` and
``n_predict`` (server-side defaults, for reproducible tests), ``port`` (0: any free one),
``slots`` (conversations served at once, sharing one window's cache; 1 by default) and
``shared`` (``{"users": PATH, "info": PATH}``, above).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from typing import Any

EXIT_NOT_INSTALLED = 3
EXIT_LOAD_FAILED = 4
KEY_VARIABLE = "ZCODER_EMBEDDED_KEY"  # the API key its clients send (zcoder.model.embedded)
NO_ORIGIN = "zcoder:none"  # the one origin allowed: not one a browser can send


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _params(spec: dict[str, Any], xllamacpp: Any) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = str(spec["model"])
    params.model_alias = {str(spec["alias"])}  # a set of names: a str would be its letters
    params.n_ctx = int(spec["n_ctx"])
    slots = int(spec.get("slots", 1))
    params.n_parallel = slots  # 1: one conversation at a time, the whole window its own
    if slots > 1:
        # Every slot may grow to the whole window, and together they share its cache: the
        # memory of one window, whatever the number of agents. An idle slot's tokens move
        # to llama.cpp's RAM prompt cache (cache_idle_slots, its default), from which the
        # next request that begins the same way takes them back.
        params.kv_unified = True
    params.port = int(spec.get("port", 0))
    params.hostnames = ["127.0.0.1"]  # loopback only: the server is zcoder's, no one else's
    # Loopback is not enough: any process of any user, and any web page the user opens
    # (llama.cpp echoes every Origin, with credentials), could reach it. Requests need the
    # key zcoder made (in the environment, never on a command line: /proc shows those to
    # everyone); browsers are told no origin may read an answer; the slots' state (what
    # each agent's request is doing) is not served at all.
    key = os.environ.get(KEY_VARIABLE, "")
    if key:
        params.api_keys = [key]
    params.cors_origins = NO_ORIGIN
    params.cors_origins_explicit = True
    params.cors_credentials = False
    params.endpoint_slots = False
    threads = int(spec["threads"])
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = 2
    params.use_jinja = True
    params.endpoint_props = True
    params.ui = False
    if spec.get("template"):
        params.chat_template = str(spec["template"])
    if spec.get("seed") is not None:
        params.sampling.seed = int(spec["seed"])
    if spec.get("temperature") is not None:
        params.sampling.temp = float(spec["temperature"])
    if spec.get("n_predict") is not None:
        params.n_predict = int(spec["n_predict"])
    return params


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m zcoder.model.embedded_child SPEC_JSON", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    try:
        import xllamacpp  # noqa: PLC0415 (a missing package is reported, not raised)
    except ImportError as exc:
        _say(
            {
                "error": "the embedded llama.cpp server needs the xllamacpp package "
                f"({exc}); install it with: pip install 'zcoder[local]'"
            }
        )
        return EXIT_NOT_INSTALLED
    try:
        server = xllamacpp.Server(_params(spec, xllamacpp))
    except (RuntimeError, ValueError, MemoryError) as exc:
        _say({"error": f"llama.cpp could not load {spec['model']}: {exc}"})
        return EXIT_LOAD_FAILED
    _say({"url": str(server.listening_address)})
    shared = spec.get("shared")
    if isinstance(shared, dict):
        _serve_while_used(str(shared["users"]), str(shared["info"]))
    else:
        # Until the parent goes: end of file on the pipe only it writes to.
        while sys.stdin.buffer.read(4096):
            pass
    # No orderly shutdown: the kernel frees the model and the socket at once, and a
    # native destructor waiting on a busy slot cannot hold the exit up.
    os._exit(0)


def _serve_while_used(users: str, info: str) -> None:
    """Serve until nobody uses the server: adopted by the parent first (see the module
    docstring), then until the exclusive lock on ``users`` is granted."""
    if sys.stdin.buffer.readline().strip() != b"adopted":
        return  # the parent went before publishing the server: nobody can find it
    fd = os.open(users, os.O_RDWR | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_EX)  # granted once the last user's shared lock is gone
    # Still holding it, so no new user can attach before the address is withdrawn.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(info)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
