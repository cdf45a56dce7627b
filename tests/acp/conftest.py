"""The --prompt tests' fixture: a private home and workspace (the fake Ollama, ``fake``, is
tests/conftest.py's)."""

from tests.test_oneshot import env

__all__ = ["env"]
