"""Counting and training keep working in a child made by fork, after the parent has trained
(DataLoader workers and multiprocessing pools fork all the time)."""

from __future__ import annotations

import multiprocessing
import os
import sys

import pytest

import tokenmill

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
# Enough text that counting and training go parallel.
TEXT = ["the quick brown fox jumps over the lazy dog " * 2000 + str(i) for i in range(64)]


def _train_size() -> int:
    tok = tokenmill.train_bpe(TEXT, vocab_size=300)
    counts = tokenmill.count_words(TEXT)
    return tok.vocab_size * 1000 + len(counts)


def test_train_in_a_forked_child() -> None:
    expected = _train_size()  # the parent's thread pool is running now
    pid = os.fork()
    if pid == 0:  # the child: exit status says whether it got the same answer
        try:
            os._exit(0 if _train_size() == expected else 1)
        except BaseException:
            os._exit(2)
    # A hang would stop the child for good: wait with a deadline, then kill it.
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        import time

        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("training in the forked child hung")
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(sys.platform != "linux", reason="the fork start method is Linux's default")
def test_multiprocessing_pool_with_fork() -> None:
    expected = _train_size()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        result = pool.map_async(_worker, range(2))
        assert result.get(timeout=60) == [expected, expected]


def _worker(_: int) -> int:
    return _train_size()
