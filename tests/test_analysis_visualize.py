"""tokenmill.analysis.visualize: token pieces, the HTML page and the terminal rendering."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from analysis_data import (
    hand_tokenizer,
    real,
    tiktoken_cache,  # noqa: F401 - autouse fixture: encoding names load offline
    tiktoken_real,
)

from tokenmill.analysis import token_pieces, token_views, tokens_html, tokens_terminal


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pieces_cover_the_text_with_tiktokens_ids(name: str, multilingual_text: str) -> None:
    pieces = token_pieces(real(name), multilingual_text)
    assert "".join(p.text for p in pieces) == multilingual_text
    assert [p.id for p in pieces] == tiktoken_real(name).encode_ordinary(multilingual_text)


def test_partial_characters_by_hand() -> None:
    # "ab é" → ab | " \xc3" | \xa9: the space shows with the second token, é with the third.
    pieces = token_pieces(hand_tokenizer(), "ab é")
    assert [(p.text, p.token) for p in pieces] == [("ab", "ab"), (" ", " \\xc3"), ("é", "\\xa9")]


class _Spans(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.titles: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag == "span":
            self.titles.append(dict(attrs)["title"] or "")


def test_html_page_is_self_contained_with_ids_on_hover() -> None:
    text = "Hello <b>world</b> & 12345\nnext line"
    page = tokens_html({"cl": "cl100k_base", "o2": "o200k_base"}, text)
    parser = _Spans()
    parser.feed(page)
    ids = {name: tiktoken_real(name).encode_ordinary(text) for name in ("cl100k_base", "o200k_base")}
    assert len(parser.titles) == len(ids["cl100k_base"]) + len(ids["o200k_base"])
    assert parser.titles[0] == f"id {ids['cl100k_base'][0]}: 'Hello'"
    assert "script" not in parser.tags and "http" not in page and "<b>" not in page
    assert page.count("<section>") == 2


def test_terminal_rendering() -> None:
    plain = tokens_terminal({"hand": hand_tokenizer()}, "ab ab a", color=False, ids=True)
    assert plain == "hand (4 tokens)\nab| ab| |a\n256 257 32 97"
    colored = tokens_terminal({"hand": hand_tokenizer()}, "ab ab a")
    assert colored.count("\x1b[0m") == 4 and "ab" in colored
    views = token_views(["cl100k_base"], "x")
    assert views[0].tokenizer == "cl100k_base" and views[0].tokens == 1


def test_wordpiece_and_sentencepiece_pieces_point_into_the_text(tmp_path, stdlib_text: str) -> None:  # type: ignore[no-untyped-def]
    import io

    import sentencepiece as spm

    import tokenmill

    (tmp_path / "vocab.txt").write_text("[UNK]\nhello\nworld\n##s\n,\n")
    wordpiece = tokenmill.Tokenizer.from_wordpiece_vocab(tmp_path / "vocab.txt")
    text = "Hello worlds, xyz  "
    view = token_views({"wp": wordpiece}, text)[0]
    assert [(p.before, p.text, p.token) for p in view.pieces] == [
        ("", "Hello", "hello"),
        (" ", "world", "world"),
        ("", "s", "##s"),
        ("", ",", ","),
        (" ", "xyz", "[UNK]"),
    ]
    assert view.tail == "  "
    assert tokens_terminal({"wp": wordpiece}, text, color=False) == "wp (5 tokens)\nHello| world|s|,| xyz  "
    lines = [line for line in stdlib_text[:100_000].splitlines() if line.strip()]
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=300, minloglevel=2)
    sp = tokenmill.Tokenizer.from_sentencepiece(out.getvalue())
    text = "def  f(x):\n    return x  # done"
    view = token_views({"sp": sp}, text)[0]
    assert "".join(p.before + p.text for p in view.pieces) + view.tail == text
    assert [p.id for p in view.pieces] == spm.SentencePieceProcessor(model_proto=out.getvalue()).encode(text)
