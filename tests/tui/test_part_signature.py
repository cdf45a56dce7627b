"""Every part is made one way: ``Part(context, *, its own wires)``.

The ``PartContext`` (tui/parts/services.py) is the one positional argument: the services,
the ``Say`` and the ``Host``. Whatever else a part needs (another part, one of the
screen's own calls) is a keyword argument, named, so what it depends on reads off its
signature; none takes the app's services, ``Say`` or host any other way.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import zcoder.remote.parts
import zcoder.remote.sessions
import zcoder.tui.parts
from zcoder.tui.parts.services import Part

# The parts docs/development.md names (Parts builds each; RelayUI builds the two under it).
NAMED = {
    "AgentView",
    "CustomCommandsUI",
    "DialogApprovals",
    "EditsUI",
    "InboxUI",
    "McpUI",
    "ModelUI",
    "QuitUI",
    "RelayPolicyUI",
    "RelayUI",
    "SessionsUI",
    "SlashCommands",
    "Startup",
    "Turns",
}


def parts() -> dict[str, type[Part]]:
    """Every subclass of ``Part`` in tui/parts/ and in the remote front end's parts."""
    for module in pkgutil.iter_modules(zcoder.tui.parts.__path__, "zcoder.tui.parts."):
        importlib.import_module(module.name)
    found: dict[str, type[Part]] = {}
    waiting = list(Part.__subclasses__())
    while waiting:
        kind = waiting.pop()
        found[kind.__name__] = kind
        waiting += kind.__subclasses__()
    return found


def problems(kind: type) -> list[str]:
    """What is wrong with how ``kind`` is made: [] for ``kind(context, *, wires)``."""
    first, *rest = inspect.signature(kind).parameters.values()
    found = []
    if first.name != "context" or first.annotation not in ("PartContext", "'PartContext'"):
        found.append(f"first argument {first.name}: {first.annotation}, not context: PartContext")
    if first.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
        found.append(f"context is {first.kind.description}")
    found += [
        f"{parameter.name} is {parameter.kind.description}, not keyword-only"
        for parameter in rest
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    found += [
        f"{parameter.name} is given apart from the context"
        for parameter in rest
        if parameter.name in {"services", "say", "host"}
    ]
    return found


def test_every_named_part_is_a_part() -> None:
    assert set(parts()) >= NAMED
    assert {"RemoteModel", "RemoteRelay", "RemoteSessions", "RemoteSlash"} <= set(parts())


def test_every_part_is_made_from_its_context_and_keywords() -> None:
    assert {name: problems(kind) for name, kind in parts().items() if problems(kind)} == {}


def test_the_check_sees_another_shape() -> None:
    class Loose:
        def __init__(self, services: object, say: object, *, host: object) -> None: ...

    assert problems(Loose) == [
        "first argument services: object, not context: PartContext",
        "say is positional or keyword, not keyword-only",
        "say is given apart from the context",
        "host is given apart from the context",
    ]
