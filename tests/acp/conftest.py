"""The --prompt tests' fixtures (a private home and workspace, the fake Ollama)."""

from tests.test_oneshot import env, fake

__all__ = ["env", "fake"]
