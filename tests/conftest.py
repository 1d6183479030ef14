"""Shared fixtures: real text from this machine and multilingual sentences written for the tests."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest
from hypothesis import settings

# CI (`.ci/run` sets TOKENMILL_CI) draws the same hypothesis examples every run: a failure there
# is reproducible, and a change is never held up by a fresh example of a difference from a peer
# that is already documented. Runs elsewhere keep exploring new examples.
settings.register_profile("ci", derandomize=True)
if os.environ.get("TOKENMILL_CI"):
    settings.load_profile("ci")

# Sentences in many scripts, written for these tests (not taken from any corpus).
MULTILINGUAL = [
    "The committee's report wasn't ready, so we'll meet again on Tuesday at 10:30.",
    "Die Brücke über den Fluß wurde 1998 für 12,5 Millionen Euro gebaut.",
    "Le café où nous étions hier soir fermera bientôt ; dommage, n'est-ce pas ?",
    "Москва — столица России, в ней живёт более 12 миллионов человек.",
    "東京は日本の首都で、人口は約1400万人です。",
    "北京是中国的首都，也是一座历史悠久的城市。",
    "서울은 대한민국의 수도이며 한강이 도시를 가로지른다.",
    "القاهرة هي عاصمة مصر وأكبر مدنها.",
    "ירושלים היא עיר עתיקה עם היסטוריה ארוכה.",
    "नई दिल्ली भारत की राजधानी है और यहाँ बहुत भीड़ रहती है।",
    "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
    "Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "İstanbul'da çay içmek güzeldir; ÇOK GÜZEL!",
    "Emoji: 👍🏽 👨‍👩‍👧‍👦 🇯🇵 — done.\r\n\tTabs\tand\r\nCRLF lines  \n\n   indented",
    "Combining: e\u0301 a\u0308 n\u0303 and ZWJ\u200dtext, NBSP\u00a0here, ideographic\u3000space.",
    "I'M SURE THEY'LL SAY IT'S FINE; you've, we'd, she's, ſ's 'S 'T 'RE 'VE 'M 'LL 'D",
    "numbers 1234567890 ١٢٣٤٥ ⅫⅣ ½ ²³ 0x1F 3.14159 -42",
]


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.glob("*.py"))


@pytest.fixture(scope="session")
def stdlib_text() -> str:
    """About 1 MB of real Python source from the standard library."""
    parts, size = [], 0
    for p in stdlib_files():
        text = p.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text)
        if size > 1_000_000:
            break
    return "".join(parts)


@pytest.fixture(scope="session")
def multilingual_text() -> str:
    return "\n".join(MULTILINGUAL)


@pytest.fixture(scope="session")
def ray_cluster():
    """A real two-node Ray cluster on this machine (1 CPU and a small object store each), started
    once per session, listening on and advertising 127.0.0.1 only (see `tests/ray_cluster.py`)."""
    pytest.importorskip("ray")
    from ray_cluster import start_loopback_cluster

    cluster, ray = start_loopback_cluster()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
