"""WordCounts move between processes as their compact saved bytes: the primitives Spark, Dask or
multiprocessing users combine (count a partition, pickle, add)."""

from __future__ import annotations

import multiprocessing
import operator
import pickle
from concurrent.futures import ProcessPoolExecutor
from functools import reduce

from tokenmill import WordCounts, count_words


def test_word_counts_pickle_as_their_saved_bytes(tmp_path, stdlib_text):
    counts = count_words(iter([stdlib_text[:20_000]]))
    counts.dropped_words, counts.dropped_count = 2, 5
    counts.save(tmp_path / "c.counts")
    assert counts.to_bytes() == (tmp_path / "c.counts").read_bytes()
    back = pickle.loads(pickle.dumps(counts))
    assert back == counts == WordCounts.from_bytes(counts.to_bytes())
    assert (back.dropped_words, back.dropped_count) == (2, 5)
    assert len(pickle.dumps(counts)) < len(counts.to_bytes()) + 200
    assert counts != count_words(iter([stdlib_text[:20_000]]), pattern="gpt2")


def test_counting_partitions_in_other_processes_and_adding_equals_one_count(tmp_path, stdlib_text):
    # The Spark/Dask example of docs/training.md, with a process pool standing in for the engine.
    files = []
    for i in range(4):
        files.append(tmp_path / f"part{i}.txt")
        files[-1].write_text(stdlib_text[i * 100_000 : (i + 1) * 100_000], encoding="utf-8")
    # spawn: a fresh interpreter per worker (forking a process that runs threads is unsafe).
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        total = reduce(operator.add, pool.map(count_words, files))
    assert total == count_words(files)
