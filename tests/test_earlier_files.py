"""Files written by earlier tokenmill versions load and encode as they did: pinned files of
format version 3 (written by the last build before version 4, one per model family, with model
inputs and a SentencePiece normalizer among them) and the ids that build gave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tokenmill

FIXTURES = Path(__file__).parent / "fixtures" / "v3"
EXPECTED = json.loads((FIXTURES / "expected_v3.json").read_text(encoding="utf-8"))
FAMILIES = ["bpe", "wordpiece", "unigram", "sentencepiece_bpe"]


@pytest.mark.parametrize("family", FAMILIES)
def test_version_3_files_load_and_give_the_same_ids(family: str) -> None:
    path = FIXTURES / f"tokenizer_v3_{family}.json"
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 3
    tok = tokenmill.Tokenizer.load(path)
    for text, ids in EXPECTED[family].items():
        assert tok.encode(text, allowed_special="all") == ids, text
    for text, ids in EXPECTED[family + "_for_model"].items():
        assert tok.encode_for_model(text).ids == ids, text


def test_a_newer_version_is_refused_by_name(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "tokenizer_v3_bpe.json").read_text(encoding="utf-8"))
    doc["version"] = 99
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokenmill.FormatError, match="format version 99"):
        tokenmill.Tokenizer.load(path)
