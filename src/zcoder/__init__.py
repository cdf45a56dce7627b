"""zcoder: a terminal coding agent for local Ollama models.

Several zcoder instances on one machine find each other and hand each other work through a
private Unix-socket relay (see :mod:`zcoder.relay`).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
