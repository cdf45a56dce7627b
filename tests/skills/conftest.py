"""The agent harness of tests/agent, for skills in a real agent's turns."""

from tests.agent.conftest import harness, store, workspace

__all__ = ["harness", "store", "workspace"]
