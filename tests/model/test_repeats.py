"""The repeated-line guard (zcoder.model.repeats): loops trip it, legitimate repetition
does not. Text is fed in small pieces, as a model streams it."""

from __future__ import annotations

import pytest

from zcoder.model.repeats import Loop, RepeatGuard


def streamed(text: str, piece: int = 5) -> Loop | None:
    guard = RepeatGuard()
    for start in range(0, len(text), piece):
        loop = guard.feed(text[start : start + piece])
        if loop is not None:
            return loop
    return guard.check()


def test_a_chunk_repeated_without_newlines_is_cut_to_what_came_before_and_one_copy() -> None:
    loop = streamed("Install these: " + "numpy-2.12-py38-py38," * 200)
    assert loop is not None
    assert loop.kept == "Install these: numpy-2.12-py38-py38,"
    assert loop.unit == "numpy-2.12-py38-py38,"
    assert "'numpy-2.12-py38-py38,'" in loop.describe()


def test_one_line_repeated_is_a_loop() -> None:
    loop = streamed("The fix:\n" + "pip install numpy==2.12 --upgrade\n" * 40)
    assert loop is not None
    assert loop.kept == "The fix:\npip install numpy==2.12 --upgrade\n"


def test_a_cycle_of_two_lines_is_a_loop() -> None:
    loop = streamed("Steps:\n" + "run the tests\nfix the bug\n" * 40)
    assert loop is not None
    assert loop.kept == "Steps:\nrun the tests\nfix the bug\n"


def test_a_loop_is_found_soon_not_at_the_output_cap() -> None:
    guard = RepeatGuard()
    text = "numpy-2.12-py38-py38," * 1000
    fed = 0
    for start in range(0, len(text), 7):
        fed += 7
        if guard.feed(text[start : start + 7]) is not None:
            break
    assert fed < 600  # about 20 copies, not 21,000 characters


TABLE = "| name | size |\n|------|------|\n" + "".join(
    f"| file{n}.py | {n * 17} |\n" for n in range(60)
)
CODE = "".join(
    f"function f{n}() {{\n    if (x) {{\n        if (y) {{\n            return;\n        }}\n"
    "    }\n}\n\n\n\n"
    for n in range(30)
)
BRACES = "        }\n    }\n}\n" * 60 + "\n" * 200
LIST = "".join(f"- item {n}: the same kind of thing\n" for n in range(80))
RULES = "=" * 500 + "\n" + "-=" * 300 + "\n" + "+------" * 80 + "\n" + "─" * 400 + "\n"
PROSE = " ".join(f"word{n % 97} and another {n % 13}" for n in range(400))


@pytest.mark.parametrize(
    "text",
    [TABLE, CODE, BRACES, LIST, RULES, PROSE],
    ids=["table", "code", "braces-and-blank-lines", "list", "separators", "prose"],
)
def test_legitimate_repetition_is_not_a_loop(text: str) -> None:
    assert streamed(text) is None
    assert streamed(text, piece=1) is None
