"""Shared data for the analysis tests: a small hand-made vocabulary whose every count can be
worked out by hand, real vocabularies, and parallel sentences written for these tests."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from vocab_files import fill_tiktoken_cache, tiktoken_encoding, vocabulary_path

import tokenmill

# The same four sentences in six languages (written for these tests, not from any corpus).
PARALLEL = {
    "en": [
        "The train leaves at seven in the morning.",
        "My sister bought three red apples at the market.",
        "Please close the window, it is cold today.",
        "We read the letter together after dinner.",
    ],
    "de": [
        "Der Zug fährt um sieben Uhr morgens ab.",
        "Meine Schwester hat auf dem Markt drei rote Äpfel gekauft.",
        "Bitte schließ das Fenster, heute ist es kalt.",
        "Nach dem Abendessen haben wir den Brief zusammen gelesen.",
    ],
    "fr": [
        "Le train part à sept heures du matin.",
        "Ma sœur a acheté trois pommes rouges au marché.",
        "Ferme la fenêtre, s'il te plaît, il fait froid aujourd'hui.",
        "Nous avons lu la lettre ensemble après le dîner.",
    ],
    "ru": [
        "Поезд отправляется в семь утра.",
        "Моя сестра купила на рынке три красных яблока.",
        "Закрой, пожалуйста, окно, сегодня холодно.",
        "После ужина мы вместе прочитали письмо.",
    ],
    "ja": [
        "電車は朝七時に出発します。",
        "妹は市場で赤いりんごを三つ買いました。",
        "今日は寒いので窓を閉めてください。",
        "夕食の後、私たちは一緒に手紙を読みました。",
    ],
    "hi": [
        "ट्रेन सुबह सात बजे निकलती है।",
        "मेरी बहन ने बाज़ार से तीन लाल सेब खरीदे।",
        "कृपया खिड़की बंद कर दो, आज ठंड है।",
        "रात के खाने के बाद हमने साथ में पत्र पढ़ा।",
    ],
}

# A byte-level vocabulary small enough to count by hand (gpt2 pre-tokenizer): the 256 bytes
# (id = byte) and four longer tokens. "é" (C3 A9) has
# no token of its own, so it is spelled by two byte tokens; "a b" cannot be reached (the
# pre-tokenizer cuts "a" from " b"); " \xc3" is a partial character.
HAND_RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" ab": 257, b"a b": 258, b" \xc3": 259}
AB, SPACE_AB, A_SPACE_B, SPACE_C3 = 256, 257, 258, 259


def hand_tokenizer() -> tokenmill.Tokenizer:
    return tokenmill.Tokenizer.from_tiktoken(HAND_RANKS, pattern="gpt2", special_tokens={})


@functools.cache
def real(name: str) -> tokenmill.Tokenizer:
    """cl100k_base or o200k_base, read from the files the test dependencies carry."""
    return tokenmill.Tokenizer.from_tiktoken(vocabulary_path(name), pattern=name)


@functools.cache
def tiktoken_real(name: str):  # type: ignore[no-untyped-def]
    return tiktoken_encoding(name, vocabulary_path(name))


def offline_tiktoken_cache(directory: Path) -> None:
    """Every OpenAI vocabulary in a tiktoken cache, so encoding names load with no network."""
    fill_tiktoken_cache(directory)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)


@pytest.fixture(scope="module", autouse=True)
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Autouse in the modules that import it: encoding names load from a filled cache."""
    offline_tiktoken_cache(tmp_path_factory.mktemp("tiktoken-cache"))
