"""The textbook BPE examples reproduce exactly."""

import tokenmill


def test_low_lower_newest_widest() -> None:
    tok = tokenmill.train_bpe(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3},
        num_merges=10,
        byte_level=False,
        end_of_word_suffix="</w>",
    )
    assert tok.merges[:5] == [(b"e", b"s"), (b"es", b"t"), (b"est", b"</w>"), (b"l", b"o"), (b"lo", b"w")]
    assert tok.tokenize("lowest") == ["low", "est</w>"]
    assert len(tok.merges) == 10
    # The end-of-word marker is a symbol of its own in the base vocabulary.
    assert tok.token_to_id("</w>") is not None


def test_cat_mat_without_marker() -> None:
    tok = tokenmill.train_bpe({"cat": 3, "mat": 2}, num_merges=2, byte_level=False)
    assert tok.merges == [(b"a", b"t"), (b"c", b"at")]
    assert tok.tokenize("cat") == ["cat"]
    assert tok.tokenize("mat") == ["m", "at"]
