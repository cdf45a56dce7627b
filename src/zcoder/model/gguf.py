"""The few facts zcoder needs from a GGUF file's header, read without llama.cpp.

``zcoder --gguf FILE`` sizes and configures the embedded server (zcoder.model.embedded)
before it starts it: the trained window (``{arch}.context_length``) bounds the window it
asks for, and the file's own chat template (``tokenizer.chat_template``) says whether
zcoder's tool-capable template has to stand in. Reading the header here also turns a file
that is not GGUF (a download cut short, a wrong path) into one clear sentence before any
process is started, instead of llama.cpp's log lines.

The format (ggml's docs/gguf.md): magic ``GGUF``, a little-endian uint32 version (2 or 3;
version 1 used 32-bit counts and is not read), uint64 tensor and key-value counts, then
the key-value pairs: a string key, a uint32 value type, the value. Strings are a uint64
length and UTF-8 bytes; arrays a uint32 element type, a uint64 count and the elements.
Only the header is read, never the tensors; the vocabulary arrays are skipped over.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from zcoder.base.errors import ZcoderError

__all__ = ["GGUFError", "GGUFInfo", "read_gguf_info"]

_MAGIC: Final = b"GGUF"
_MAX_STRING: Final = 64 << 20
"""No header string (a chat template is a few kB) is anywhere near this: a file that says
otherwise is damaged, and reading it would only waste memory."""
_MAX_KEYS: Final = 1 << 20

# Value types: their struct format, for the fixed-size ones.
_FIXED: Final = {
    0: "B",  # uint8
    1: "b",  # int8
    2: "H",  # uint16
    3: "h",  # int16
    4: "I",  # uint32
    5: "i",  # int32
    6: "f",  # float32
    7: "?",  # bool
    10: "Q",  # uint64
    11: "q",  # int64
    12: "d",  # float64
}
_STRING: Final = 8
_ARRAY: Final = 9


class GGUFError(ZcoderError, ValueError):
    """The file cannot be read as GGUF; the message says which file and why."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the embedded server needs to know about a model file."""

    architecture: str
    context_length: int | None
    """The window the model was trained with, or None when the file does not say."""
    chat_template: str | None
    name: str | None

    @property
    def template_takes_tools(self) -> bool:
        """Whether the file's own template can render tools: a Jinja chat template gets
        them as the ``tools`` variable, so one that never names it cannot show them."""
        return self.chat_template is not None and "tools" in self.chat_template


class _Reader:
    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream = stream
        self.path = path

    def take(self, size: int) -> bytes:
        data = self.stream.read(size)
        if len(data) != size:
            raise GGUFError(f"{self.path} is cut short: its GGUF header ends early")
        return data

    def unpack(self, fmt: str) -> object:
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def count(self) -> int:
        value = self.unpack("Q")
        assert isinstance(value, int)
        return value

    def string(self) -> str:
        length = self.count()
        if length > _MAX_STRING:
            raise GGUFError(f"{self.path} has a damaged GGUF header (a {length}-byte string)")
        return self.take(length).decode("utf-8", "replace")

    def skip_string(self) -> None:
        length = self.count()
        if length > _MAX_STRING:
            raise GGUFError(f"{self.path} has a damaged GGUF header (a {length}-byte string)")
        self.stream.seek(length, 1)

    def value(self, kind: int, *, keep: bool) -> object:
        if kind in _FIXED:
            return self.unpack(_FIXED[kind])
        if kind == _STRING:
            if keep:
                return self.string()
            self.skip_string()
            return None
        if kind == _ARRAY:
            element = self.unpack("I")
            assert isinstance(element, int)
            length = self.count()
            if element in _FIXED:
                self.stream.seek(struct.calcsize(_FIXED[element]) * length, 1)
            else:
                for _ in range(length):
                    self.value(element, keep=False)
            return None
        raise GGUFError(f"{self.path} has a damaged GGUF header (value type {kind})")


def read_gguf_info(path: Path) -> GGUFInfo:
    """The architecture, trained window and chat template of the GGUF file at ``path``.

    Raises GGUFError (a one-line message) for a file that is missing, unreadable, not
    GGUF, of an unsupported version or damaged.
    """
    try:
        with path.open("rb") as stream:
            return _read(_Reader(stream, path))
    except FileNotFoundError:
        raise GGUFError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise GGUFError(f"{path} is a directory, not a GGUF model file") from None
    except OSError as exc:
        raise GGUFError(f"{path} cannot be read: {exc.strerror or exc}") from None


def _read(reader: _Reader) -> GGUFInfo:
    magic = reader.stream.read(4)
    if magic != _MAGIC:
        raise GGUFError(
            f"{reader.path} is not a GGUF model file (it does not start with 'GGUF'); "
            "llama.cpp runs .gguf files, such as those on Hugging Face"
        )
    version = reader.unpack("I")
    if version not in (2, 3):
        raise GGUFError(f"{reader.path} is GGUF version {version}; zcoder reads versions 2 and 3")
    reader.count()  # tensors
    keys = reader.count()
    if keys > _MAX_KEYS:
        raise GGUFError(f"{reader.path} has a damaged GGUF header ({keys} keys)")
    found: dict[str, object] = {}
    for _ in range(keys):
        key = reader.string()
        kind = reader.unpack("I")
        assert isinstance(kind, int)
        wanted = key in ("general.architecture", "general.name", "tokenizer.chat_template")
        wanted = wanted or key.endswith(".context_length")
        found[key] = reader.value(kind, keep=wanted)
    architecture = found.get("general.architecture")
    if not isinstance(architecture, str) or not architecture:
        raise GGUFError(f"{reader.path} names no model architecture (general.architecture)")
    window = found.get(f"{architecture}.context_length")
    template = found.get("tokenizer.chat_template")
    name = found.get("general.name")
    return GGUFInfo(
        architecture=architecture,
        context_length=window if isinstance(window, int) and window > 0 else None,
        chat_template=template if isinstance(template, str) and template.strip() else None,
        name=name if isinstance(name, str) and name.strip() else None,
    )
