"""The agent harness of tests/agent, for skills in a real agent's turns."""

from tests.agent.conftest import client, fake, harness, store, workspace

__all__ = ["client", "fake", "harness", "store", "workspace"]
