"""The context window: how many tokens the model keeps of a conversation (``num_ctx``).

Ollama gives a model 4096 tokens on a machine with less than 24 GiB of VRAM unless told
otherwise, and silently drops the start of a longer prompt: zcoder's own instructions
and tool schemas come first, so they are what goes. zcoder therefore sends
``options.num_ctx`` on every chat request, the warm-up included (a different ``num_ctx``
would make Ollama load the model again). The window is chosen per model, first match wins:

1. ``--context-window N`` (``auto``: skip steps 1 and 2)
2. ``ZCODER_CONTEXT_WINDOW`` (``auto``: skip it)
3. ``$ZCODER_HOME/settings.json``: ``models.<model>.context_window``, then ``context_window``
   (``"auto"`` in either: on to step 4)
4. what Ollama says:

   a. the window it has already allocated, when the model is loaded (``/api/ps``
      ``context_length``): kept, so nothing reloads; raised to ``CONTEXT_WINDOW_FLOOR``
      when smaller (never past the model's trained length);
   b. otherwise the model's trained length (``/api/show`` ``model_info
      ["<arch>.context_length"]``), capped at ``CONTEXT_WINDOW_CAP``;

5. ``DEFAULT_CONTEXT_WINDOW`` when Ollama could not be asked or did not say.

An OpenAI-compatible server has its own fixed window, which the request cannot change:
step 4 is then what the server reports (zcoder.model.openai), taken as it is.

Why these numbers: the memory of the window (the KV cache) grows with it. 32768 tokens
take about 2-4 GiB beside a 7-8B model's weights, which common 16 GiB machines hold;
trained lengths of 128k-256k would not fit them, so an automatic window stops at 32768
and a user with more memory raises it. Below 8192 tokens the system prompt, the tool
schemas and one file read already fill the window, so an automatic window never goes
lower. When Ollama says nothing, 16384 is the middle: it fits small machines and still
holds a few rounds of tool use. docs/models.md has the table for choosing by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, Protocol, runtime_checkable

from zcoder.model.errors import ModelError, OllamaUnreachable
from zcoder.settings_file import load_settings_file

__all__ = [
    "CONTEXT_WINDOW_CAP",
    "CONTEXT_WINDOW_FLOOR",
    "DEFAULT_CONTEXT_WINDOW",
    "MIN_CONTEXT_WINDOW",
    "WINDOW_SETTING",
    "ContextWindow",
    "ServerWindow",
    "WindowKind",
    "WindowProbe",
    "allocation_notice",
    "automatic_window",
    "explicit_window",
    "loaded_context_length",
    "parse_context_window",
    "parse_keep_alive",
    "resolve_context_window",
    "resolve_for_model",
    "same_model",
    "settings_window",
    "trained_context_length",
]

CONTEXT_WINDOW_CAP: Final = 32768
"""The largest window chosen automatically: what a common 16 GiB machine holds."""
CONTEXT_WINDOW_FLOOR: Final = 8192
"""The smallest window chosen automatically: below it the prompt overhead leaves no room."""
DEFAULT_CONTEXT_WINDOW: Final = 16384
"""The window when Ollama could not be asked (not running) or did not say."""
MIN_CONTEXT_WINDOW: Final = 2048
"""The smallest window a user may set: zcoder's system prompt and tools take ~1,600."""

WindowKind = Literal["flag", "env", "settings", "loaded", "trained", "server", "default"]

_ENV = "ZCODER_CONTEXT_WINDOW"
_FLAG = "--context-window"
WINDOW_SETTING: Final = "context_window"
"""The key of settings.json, at its top and in a model's entry under ``models``."""


@dataclass(frozen=True)
class ContextWindow:
    """A window in tokens and where it came from, in words a user can act on."""

    tokens: int
    source: str
    kind: WindowKind
    note: str = ""
    """Why Ollama did not say, for a default."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """Problems met on the way (a bad settings.json), to show the user once."""

    @property
    def chosen_by_user(self) -> bool:
        return self.kind in ("flag", "env", "settings")

    def describe(self) -> str:
        """``32768 tokens (the model's trained length 262144, capped at 32768)``."""
        return f"{self.tokens} tokens ({self.source})"


@runtime_checkable
class WindowProbe(Protocol):
    """What a client can tell about a model's window (OllamaClient implements it).

    Both raise ``ModelError`` when the server cannot be asked and return None when it
    does not know.
    """

    async def loaded_context_length(self, model: str) -> int | None: ...

    async def trained_context_length(self, model: str) -> int | None: ...


@runtime_checkable
class ServerWindow(Protocol):
    """A server whose window is fixed when it starts (the OpenAI-compatible client)."""

    async def context_length(self, model: str) -> int | None: ...


# -- parsing what users write ---------------------------------------------------------


def parse_context_window(raw: str | int, name: str) -> int:
    """A window the user wrote: ``32768`` or ``32k``; ValueError names ``name`` if bad."""
    text = str(raw).strip().lower()
    multiplier = 1
    if text.endswith("k"):
        text, multiplier = text[:-1].strip(), 1024
    if isinstance(raw, bool) or not text.isdigit() or int(text) * multiplier < MIN_CONTEXT_WINDOW:
        raise ValueError(
            f"{name} must be a whole number of tokens, at least {MIN_CONTEXT_WINDOW} "
            f"(such as 16384 or 32k), or auto; got {raw!r}"
        )
    return int(text) * multiplier


AUTO: Final = "auto"
"""The window written as ``auto``: chosen as when nothing is set (steps 3 to 5)."""


def explicit_window(flag: str | int | None, env: Mapping[str, str]) -> ContextWindow | None:
    """``--context-window``, else ``ZCODER_CONTEXT_WINDOW``; ValueError if the one used is bad.
    None when neither is set or the one used says ``auto`` (``--context-window auto`` wins
    over the variable, as any flag does)."""
    if flag is not None and str(flag).strip():
        if str(flag).strip().lower() == AUTO:
            return None
        return ContextWindow(parse_context_window(flag, _FLAG), _FLAG, "flag")
    raw = env.get(_ENV, "").strip()
    if raw and raw.lower() != AUTO:
        return ContextWindow(parse_context_window(raw, _ENV), _ENV, "env")
    return None


_DURATION = re.compile(r"-?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+")


def parse_keep_alive(raw: str) -> str | int:
    """``ZCODER_KEEP_ALIVE`` as Ollama reads ``keep_alive``: seconds or a Go duration.

    ``300`` or ``-1`` become numbers (seconds; negative keeps the model loaded for ever),
    ``30m`` or ``1h30m`` stay strings. ValueError for anything else.
    """
    text = raw.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if _DURATION.fullmatch(text):
        return text
    raise ValueError(
        "ZCODER_KEEP_ALIVE must be a duration such as 30m, 2h or 1h30m, a number of "
        f"seconds, or -1 to keep the model loaded; got {raw!r}"
    )


def settings_window(
    data: Mapping[str, Any], model: str, *, file: str = "settings.json"
) -> tuple[ContextWindow | None, list[str]]:
    """The window settings.json sets for ``model`` (its own entry first), and warnings."""
    warnings: list[str] = []
    models = data.get("models")
    if models is not None and not isinstance(models, dict):
        warnings.append(f'{file}: "models" must be an object of model names; ignored')
        models = None
    for key, entry in (models or {}).items():
        if not isinstance(key, str) or not same_model(key, model):
            continue
        if not isinstance(entry, dict):
            warnings.append(f'{file}: "models.{key}" must be an object; ignored')
            continue
        if WINDOW_SETTING in entry:
            if str(entry[WINDOW_SETTING]).strip().lower() == AUTO:
                return None, warnings  # the server's choice, not the file's default
            where = f"models.{key}.{WINDOW_SETTING}"
            tokens = _setting_tokens(entry[WINDOW_SETTING], f"{file}: {where}", warnings)
            if tokens is not None:
                return ContextWindow(tokens, f"{file}, {where}", "settings"), warnings
    if WINDOW_SETTING in data and str(data[WINDOW_SETTING]).strip().lower() != AUTO:
        tokens = _setting_tokens(data[WINDOW_SETTING], f"{file}: {WINDOW_SETTING}", warnings)
        if tokens is not None:
            return ContextWindow(tokens, f"{file}, {WINDOW_SETTING}", "settings"), warnings
    return None, warnings


def _setting_tokens(value: Any, name: str, warnings: list[str]) -> int | None:
    if isinstance(value, int | str) and not isinstance(value, bool):
        try:
            return parse_context_window(value, name)
        except ValueError as exc:
            warnings.append(f"{exc}; ignored")
            return None
    warnings.append(f"{name} must be a whole number of tokens; got {value!r}; ignored")
    return None


# -- what Ollama reports ----------------------------------------------------------------


def _full_name(name: str) -> str:
    """``qwen3-coder`` → ``qwen3-coder:latest``, as Ollama names it; case-insensitive."""
    name = name.strip().lower()
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def same_model(a: str, b: str) -> bool:
    return _full_name(a) == _full_name(b)


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def trained_context_length(show: Mapping[str, Any]) -> int | None:
    """``model_info["<arch>.context_length"]`` of an ``/api/show`` answer, if there."""
    info = show.get("model_info")
    if not isinstance(info, dict):
        return None
    arch = info.get("general.architecture")
    if isinstance(arch, str) and arch:
        found = _positive_int(info.get(f"{arch}.context_length"))
        if found is not None:
            return found
    for key, value in info.items():  # an architecture key Ollama spelled otherwise
        if isinstance(key, str) and key.endswith(".context_length"):
            found = _positive_int(value)
            if found is not None:
                return found
    return None


def loaded_context_length(running: Sequence[Mapping[str, Any]], model: str) -> int | None:
    """The ``context_length`` ``/api/ps`` reports for ``model``, if it is loaded."""
    for entry in running:
        names = [entry.get("name"), entry.get("model")]
        if any(isinstance(name, str) and same_model(name, model) for name in names):
            return _positive_int(entry.get("context_length"))
    return None


def automatic_window(
    *, loaded: int | None, trained: int | None, unknown: str = "", who: str = "Ollama"
) -> ContextWindow:
    """The window from what Ollama reported (see the module docstring for the rules)."""
    floor = min(CONTEXT_WINDOW_FLOOR, trained) if trained else CONTEXT_WINDOW_FLOOR
    if loaded is not None:
        source = f"Ollama has it loaded with {loaded}"
        if loaded >= floor:
            return ContextWindow(loaded, source, "loaded")
        return ContextWindow(floor, f"{source}, raised to the floor {floor}", "loaded")
    if trained is not None:
        source = f"the model's trained length {trained}"
        if trained > CONTEXT_WINDOW_CAP:
            return ContextWindow(
                CONTEXT_WINDOW_CAP, f"{source}, capped at {CONTEXT_WINDOW_CAP}", "trained"
            )
        return ContextWindow(trained, source, "trained")
    return ContextWindow(
        DEFAULT_CONTEXT_WINDOW,
        f"default, {who} did not say",
        "default",
        note=unknown or "Ollama reported no context length for this model",
    )


async def resolve_context_window(
    model: str,
    *,
    explicit: ContextWindow | None,
    settings: Mapping[str, Any] | None = None,
    probe: object = None,
) -> ContextWindow:
    """The window for ``model``, first match wins (see the module docstring).

    ``probe`` is the model client: a ``WindowProbe`` (Ollama) or a ``ServerWindow``.
    """
    if explicit is not None:
        return explicit
    from_file, warnings = settings_window(settings or {}, model)
    if from_file is not None:
        return replace(from_file, warnings=tuple(warnings))
    window = await _ask_ollama(model, probe)
    return replace(window, warnings=tuple(warnings))


async def _ask_ollama(model: str, probe: object) -> ContextWindow:
    if isinstance(probe, ServerWindow) and not isinstance(probe, WindowProbe):
        tokens = await probe.context_length(model)
        if tokens is not None:
            return ContextWindow(tokens, f"the server reports {tokens}", "server")
        return automatic_window(
            loaded=None, trained=None, unknown="no context length reported", who="the server"
        )
    if not isinstance(probe, WindowProbe):
        return automatic_window(
            loaded=None, trained=None, unknown="no way to ask", who="the server"
        )
    loaded: int | None = None
    try:
        loaded = await probe.loaded_context_length(model)
    except OllamaUnreachable as exc:
        return automatic_window(loaded=None, trained=None, unknown=str(exc))
    except ModelError:
        pass  # an Ollama without /api/ps: the trained length still tells
    if loaded is not None and loaded >= CONTEXT_WINDOW_FLOOR:
        return automatic_window(loaded=loaded, trained=None)
    try:
        trained = await probe.trained_context_length(model)
    except ModelError as exc:
        if loaded is not None:
            return automatic_window(loaded=loaded, trained=None)
        return automatic_window(loaded=None, trained=None, unknown=str(exc))
    return automatic_window(loaded=loaded, trained=trained)


async def resolve_for_model(
    model: str, *, explicit: ContextWindow | None, home: Path, probe: object
) -> ContextWindow:
    """``resolve_context_window`` with ``home/settings.json`` read now (its warnings kept)."""
    settings = load_settings_file(home)
    window = await resolve_context_window(
        model, explicit=explicit, settings=settings.data, probe=probe
    )
    return replace(window, warnings=settings.warnings + window.warnings)


def allocation_notice(model: str, window: ContextWindow, allocated: int | None) -> str | None:
    """What to tell the user when Ollama loaded ``model`` with another window than asked."""
    if allocated is None or allocated == window.tokens:
        return None
    asked = window.tokens
    if allocated < asked:
        return (
            f"Ollama loaded {model} with a {allocated}-token context window, not the {asked} "
            f"zcoder asked for ({window.source}): the model or the server limits it, and "
            f"Ollama drops the start of a longer conversation. Set --context-window "
            f"{allocated} (or ZCODER_CONTEXT_WINDOW={allocated}) so zcoder plans for what "
            "Ollama gives; docs/models.md explains the choice."
        )
    return (
        f"Ollama loaded {model} with a {allocated}-token context window, more than the "
        f"{asked} zcoder asked for ({window.source}); zcoder still plans for {asked}. To use "
        f"it all, set --context-window {allocated} (or ZCODER_CONTEXT_WINDOW={allocated})."
    )
