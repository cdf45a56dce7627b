"""One root for zcoder's errors (zcoder.base.errors): every error class a user may see
derives from ZcoderError, keeps the built-in base code catches it by, and has the exit
code the program ends with when it reaches the top."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import zcoder
from zcoder.base.errors import EXIT_FAILED, EXIT_USAGE, UsageError, ZcoderError
from zcoder.base.ssh_target import TargetError
from zcoder.config import ConfigError
from zcoder.frontend.resume import ResumeError
from zcoder.model import ModelError
from zcoder.oneshot.approver import NoApprovalTerminal
from zcoder.relay.names import BadName
from zcoder.sessions import SessionNotFoundError, SessionStoreError

# Exceptions used for control flow inside one module or one exchange, never shown as
# they are: each is caught where it is raised, or said in other words first.
INTERNAL = {
    "zcoder.acp.approvals.NotAnswered",  # an ACP permission request with no answer
    "zcoder.agent.relay_tools.ConfirmationUnavailable",  # no UI to confirm a send
    "zcoder.base.lazy.FaceError",  # a package face written wrongly: a bug of ours, at import
    "zcoder.mcp.http.ResponseTooLarge",  # an httpx2.StreamError, as httpx2 expects
    "zcoder.relay.held_shares.HeldQuotaReached",  # the held-share quota, answered on the wire
    "zcoder.relay.listener_process.ListenerGone",  # the listener process ended
    "zcoder.relay.standing.Contradiction",  # a sender's standing, refused on the wire
    "zcoder.sessions.codec.MalformedRow",  # a row skipped while reading the store
    "zcoder.tools.offload.ToolStopped",  # a tool's thread told to stop
    "zcoder.tools.plan.PlanError",  # a bad update_plan, answered to the model as its error
    "zcoder.tools.web.connect.FetchError",  # a page not fetched, answered to the model
}


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(zcoder.__path__, "zcoder."):
        if module.name.endswith("__main__"):
            continue  # running it would start the program
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.name
                and not value.__name__.startswith("_")
            ):
                found[f"{module.name}.{value.__name__}"] = value
    return found


def test_every_error_a_user_may_see_derives_from_zcoder_error() -> None:
    classes = _error_classes()
    assert len(classes) > 40
    assert set(INTERNAL) <= set(classes), "an internal error moved: update INTERNAL"
    rootless = sorted(
        name
        for name, cls in classes.items()
        if name not in INTERNAL and not issubclass(cls, ZcoderError)
    )
    assert rootless == []


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (ConfigError("x"), ValueError),
        (TargetError("x"), ValueError),
        (BadName("x"), ValueError),
        (NoApprovalTerminal("x"), OSError),
        (SessionNotFoundError("abc"), LookupError),
    ],
)
def test_an_error_is_still_caught_by_its_builtin_base(
    error: ZcoderError, builtin: type[Exception]
) -> None:
    with pytest.raises(builtin):
        raise error


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (ConfigError, EXIT_USAGE),
        (TargetError, EXIT_USAGE),
        (ResumeError, EXIT_USAGE),
        (SessionStoreError, EXIT_FAILED),
        (ModelError, EXIT_FAILED),
        (ZcoderError, EXIT_FAILED),
        (UsageError, EXIT_USAGE),
    ],
)
def test_each_error_has_the_exit_code_the_docs_state(cls: type[ZcoderError], code: int) -> None:
    assert cls.exit_code == code
