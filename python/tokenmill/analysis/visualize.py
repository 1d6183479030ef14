"""See the tokens: a self-contained HTML page (token boundaries coloured, id and bytes on hover,
several tokenizers side by side) and a terminal rendering.

>>> page = tokens_html(["cl100k_base", "o200k_base"], "Hello, wörld! 12345")
>>> with open("tokens.html", "w", encoding="utf-8") as f:
...     _ = f.write(page)
>>> print(tokens_terminal(["cl100k_base", "o200k_base"], "Hello, wörld! 12345", color=False))
cl100k_base (9 tokens)
Hello|,| w|ör|ld|!| |123|45
<BLANKLINE>
o200k_base (9 tokens)
Hello|,| w|ör|ld|!| |123|45
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass
from typing import Any

from tokenmill import _checks
from tokenmill.analysis._load import TokenizersArg, load_tokenizers
from tokenmill.tokenizer import Tokenizer

# Light background colours that black text reads well on, cycled token by token.
_COLOURS = ["#fde68a", "#a7f3d0", "#bfdbfe", "#fbcfe8", "#ddd6fe", "#fed7aa", "#bbf7d0", "#c7d2fe"]
# 256-colour terminal backgrounds close to the same colours.
_ANSI = [229, 158, 153, 218, 189, 223, 194, 189]


@dataclass
class TokenPiece:
    id: int
    text: str
    """The characters of the input this token covers. Byte-level: a token that ends inside a
    character shows the whole character with the token that completes it."""
    token: str
    """The token's own bytes as text (``\\xNN`` for bytes that are not whole characters)."""
    before: str = ""
    """Input text no token covers, just before this token (spaces WordPiece drops)."""


def token_pieces(tok: Tokenizer, text: str) -> list[TokenPiece]:
    """The tokens of `text` with the characters each covers; joined with `before`, the pieces
    give back the text (up to what follows the last token, see `TokenView.tail`).

    >>> [p.text for p in token_pieces(tok, "hello world")]   # cl100k_base
    ['hello', ' world']
    >>> [(p.text, p.token) for p in token_pieces(tok, "東京")]   # 東 is split across two tokens
    [('', '\\\\xe6\\\\x9d'), ('東', '\\\\xb1'), ('京', '京')]
    >>> [(p.before, p.text) for p in token_pieces(bert, "Hello,   world")]   # spaces WordPiece drops
    [('', 'Hello'), ('', ','), ('   ', 'world')]
    """
    if not tok.byte_level:
        return _pieces_by_offsets(tok, text)
    ids = tok.encode_ordinary(text)
    raws = tok.decode_tokens_bytes(ids)
    pieces: list[TokenPiece] = []
    pending = b""
    for i, raw in zip(ids, raws, strict=True):
        pending += raw
        try:
            shown = pending.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.reason == "unexpected end of data" and e.start > 0 and len(pending) - e.start < 4:
                # Ends inside a character: show the whole characters now, the rest with the next token.
                shown = pending[: e.start].decode("utf-8", "replace")
                pending = pending[e.start :]
            elif e.reason == "unexpected end of data":
                shown = ""
            else:
                shown, pending = pending.decode("utf-8", "replace"), b""
            pieces.append(TokenPiece(i, shown, raw.decode("utf-8", "backslashreplace")))
            continue
        pending = b""
        pieces.append(TokenPiece(i, shown, raw.decode("utf-8", "backslashreplace")))
    if pending:
        pieces[-1].text += pending.decode("utf-8", "replace")
    return pieces


def _pieces_by_offsets(tok: Tokenizer, text: str) -> list[TokenPiece]:
    """WordPiece, SentencePiece and character-level models: the offsets into the original text
    that the post-processing stage reports (no template, truncation or padding here)."""
    core = tok._core.with_settings(None, None).with_post_processor_json(None)
    encoding = core.encode_for_model(text, None, False)
    pieces: list[TokenPiece] = []
    at = 0
    for i, (start, end) in zip(encoding.ids, encoding.offsets, strict=True):
        start, end = max(start, at), max(end, at)
        pieces.append(TokenPiece(i, text[start:end], tok.id_to_token(i), before=text[at:start]))
        at = end
    return pieces


@dataclass
class TokenView:
    tokenizer: str
    tokens: int
    pieces: list[TokenPiece]
    tail: str = ""
    """Input text after the last token that no token covers."""


def token_views(tokenizers: TokenizersArg, text: str) -> list[TokenView]:
    """The pieces of `text` under each tokenizer (the data the renderings draw)."""
    _checks.text("text", text)
    views = []
    for name, tok in load_tokenizers(tokenizers).items():
        pieces = token_pieces(tok, text)
        covered = sum(len(p.before) + len(p.text) for p in pieces)
        views.append(TokenView(name, len(pieces), pieces, text[covered:] if not tok.byte_level else ""))
    return views


def tokens_html(tokenizers: TokenizersArg, text: str, *, title: str = "tokenmill: tokens") -> str:
    """A self-contained HTML page (no scripts, no network) with one column per tokenizer."""
    views = token_views(tokenizers, text)
    columns = []
    for view in views:
        spans = []
        for k, piece in enumerate(view.pieces):
            tip = html.escape(f"id {piece.id}: {piece.token!r}", quote=True)
            shown = _html_text(piece.text) or "&#8203;"
            spans.append(_html_text(piece.before))
            spans.append(f'<span style="background:{_COLOURS[k % len(_COLOURS)]}" title="{tip}">{shown}</span>')
        spans.append(_html_text(view.tail))
        ids = " ".join(str(p.id) for p in view.pieces)
        columns.append(
            f"<section><h2>{html.escape(view.tokenizer)} <small>{view.tokens} tokens, "
            f"{len(text)} characters</small></h2><div class=text>{''.join(spans)}</div>"
            f"<details><summary>ids</summary><code>{ids}</code></details></section>"
        )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>"
        + html.escape(title)
        + "</title><style>body{font-family:system-ui,sans-serif;margin:1.5em}"
        "main{display:grid;grid-template-columns:repeat(auto-fit,minmax(22em,1fr));gap:1.5em}"
        "h2{font-size:1.05em}small{color:#555;font-weight:normal}"
        ".text{font-family:ui-monospace,monospace;white-space:pre-wrap;line-height:1.9;word-break:break-all}"
        ".text span{border-right:1px solid #0003;padding:1px 0}code{font-size:.8em;word-break:break-all}"
        "</style></head><body><h1>"
        + html.escape(title)
        + "</h1><p>Hover over a token for its id and bytes.</p><main>"
        + "".join(columns)
        + "</main></body></html>\n"
    )


def _html_text(text: str) -> str:
    return html.escape(text).replace("\n", "↵<br>")


def tokens_terminal(tokenizers: TokenizersArg, text: str, *, color: bool = True, ids: bool = False) -> str:
    """Text with token boundaries: coloured backgrounds (256-colour ANSI), or ``|`` between tokens
    without colour; with `ids`, the ids below. One block per tokenizer."""
    blocks = []
    for view in token_views(tokenizers, text):
        if color:
            body = "".join(
                f"{p.before}\x1b[30;48;5;{_ANSI[k % len(_ANSI)]}m{p.text}\x1b[0m" for k, p in enumerate(view.pieces)
            )
        else:
            body = "|".join(p.before + p.text for p in view.pieces)
        body += view.tail
        block = f"{view.tokenizer} ({view.tokens} tokens)\n{body}"
        if ids:
            block += "\n" + " ".join(str(p.id) for p in view.pieces)
        blocks.append(block)
    return "\n\n".join(blocks)


def views_to_dict(views: list[TokenView]) -> list[dict[str, Any]]:
    return [asdict(v) for v in views]
