"""The harness the hostile-input tests run in: it reports what the child did, and turns a
signal death, an allocation past the limit and a hang into a failure of the calling test."""

from __future__ import annotations

import os
import time

import pytest
from bounded import bounded, expect_clean

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _add(a: int, b: int) -> int:
    return a + b


def _raise() -> None:
    raise KeyError("field")


def _allocate() -> bytes:
    return bytes(8 << 30)


def test_a_return_value_and_an_exception_are_reported() -> None:
    assert bounded(_add, 2, 3).value == "5"
    outcome = bounded(_raise)
    assert not outcome.ok and outcome.error == "KeyError" and "LookupError" in outcome.classes
    expect_clean(outcome, (LookupError,), "x")
    with pytest.raises(pytest.fail.Exception, match="KeyError"):
        expect_clean(outcome, (ValueError,), "x")


def test_a_signal_death_fails_the_test() -> None:
    with pytest.raises(pytest.fail.Exception, match="SIGABRT"):
        bounded(os.abort)


def test_a_hang_fails_the_test() -> None:
    with pytest.raises(pytest.fail.Exception, match="no answer within 1 s"):
        bounded(time.sleep, 60, seconds=1)


def test_memory_past_the_limit_is_refused() -> None:
    outcome = bounded(_allocate, memory=1 << 30)
    assert outcome.error == "MemoryError"
