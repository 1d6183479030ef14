"""`tokenmill.sentencepiece.ConvertToFlatbuffer` against sentencepiece 0.2.3's: the same `.spm.fb`
bytes on every model sentencepiece trains at test time (Unigram and BPE, with and without the
character bigrams), and on hand-edited protos for what training never makes: no trainer or
normalizer spec, WORD and CHAR models, a NUL piece, BPE pieces their merges cannot reach, a large
vocabulary; and the same refusals. The Darts-clone tries are checked by reading them back."""

from __future__ import annotations

import random

import pytest

import tokenmill.sentencepiece as ours
from tokenmill.sentencepiece import darts

spm = pytest.importorskip("sentencepiece")
pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
if not hasattr(spm, "convert_to_flatbuffer"):
    pytest.skip("sentencepiece before 0.2.3 has no convert_to_flatbuffer", allow_module_level=True)

from test_sentencepiece import MODELS, trained_pair  # noqa: E402


def _same(**kwargs) -> bytes:
    """Converts with both libraries; asserts equal bytes, or the same exception family."""
    try:
        want: object = spm.convert_to_flatbuffer(**kwargs)
    except (ValueError, TypeError, RuntimeError) as e:
        family = next(f for f in (ValueError, TypeError, RuntimeError) if isinstance(e, f))
        with pytest.raises(family):
            ours.convert_to_flatbuffer(**kwargs)
        return b""
    got = ours.convert_to_flatbuffer(**kwargs)
    assert isinstance(got, bytes)
    assert len(got) == len(want)  # type: ignore[arg-type]
    assert got == want
    return got


@pytest.mark.parametrize("skip_char_bigrams", [False, True], ids=["bigrams", "no_bigrams"])
@pytest.mark.parametrize("model", [(n, t) for t in ("unigram", "bpe") for n in sorted(MODELS)], ids="-".join)
def test_trained_models_convert_to_sentencepieces_bytes(model, skip_char_bigrams, stdlib_text) -> None:
    theirs, _ = trained_pair(*model, stdlib_text)
    _same(serialized_model_proto=theirs.serialized_model_proto(), skip_char_bigrams=skip_char_bigrams)


@pytest.fixture(scope="module")
def bpe_proto(stdlib_text) -> bytes:
    theirs, _ = trained_pair("symbols", "bpe", stdlib_text)
    return theirs.serialized_model_proto()


@pytest.fixture(scope="module")
def unigram_proto(stdlib_text) -> bytes:
    theirs, _ = trained_pair("byte_fallback", "unigram", stdlib_text)
    return theirs.serialized_model_proto()


def _edited(serialized: bytes, edit) -> bytes:
    m = pb2.ModelProto()
    m.ParseFromString(serialized)
    edit(m)
    return m.SerializeToString()


NORMAL, USER_DEFINED = pb2.ModelProto.SentencePiece.NORMAL, pb2.ModelProto.SentencePiece.USER_DEFINED
OPTIONS = [{}, {"allow_unsupported_model_type": True}, {"treat_null_byte_as_unused": True}]
EDITS = {
    "no_trainer_spec": lambda m: m.ClearField("trainer_spec"),
    "no_normalizer_spec": lambda m: m.ClearField("normalizer_spec"),
    "empty_normalizer": lambda m: (m.normalizer_spec.Clear(), m.normalizer_spec.SetInParent()),
    "normalizer_flags": lambda m: (
        setattr(m.normalizer_spec, "add_dummy_prefix", False),
        setattr(m.normalizer_spec, "escape_whitespaces", False),
        setattr(m.normalizer_spec, "remove_extra_whitespaces", False),
        setattr(m.trainer_spec, "treat_whitespace_as_suffix", True),
    ),
    "empty_unk_surface": lambda m: setattr(m.trainer_spec, "unk_surface", ""),
    "renamed_specials": lambda m: (
        setattr(m.trainer_spec, "bos_piece", "<s>x"),
        setattr(m.pieces[1], "piece", "<s>x"),
        setattr(m.trainer_spec, "pad_piece", ""),
    ),
    "word": lambda m: setattr(m.trainer_spec, "model_type", pb2.TrainerSpec.WORD),
    "char": lambda m: setattr(m.trainer_spec, "model_type", pb2.TrainerSpec.CHAR),
    "duplicate_piece": lambda m: setattr(m.pieces[5], "piece", m.pieces[6].piece),
    "empty_piece": lambda m: setattr(m.pieces[5], "piece", ""),
    "nul_piece": lambda m: setattr(m.pieces[7], "piece", "\0"),
    "unk_out_of_range": lambda m: setattr(m.trainer_spec, "unk_id", len(m.pieces)),
    "no_unk": lambda m: (setattr(m.trainer_spec, "unk_id", -1), setattr(m.pieces[0], "type", NORMAL)),
    "nan_score": lambda m: setattr(m.pieces[9], "score", float("nan")),
    "all_user_defined": lambda m: [setattr(p, "type", USER_DEFINED) for p in m.pieces[3:40]],
}


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_edited_protos_convert_or_fail_as_sentencepiece(kind, edit, options, bpe_proto, unigram_proto) -> None:
    proto = _edited(bpe_proto if kind == "bpe" else unigram_proto, EDITS[edit])
    _same(model_proto=proto, **options)


def test_bpe_pieces_their_merges_miss_get_a_direct_mapping_vector(bpe_proto) -> None:
    """A BPE piece ranked below the pieces that split it is not reached by merging: the file
    then lists which pieces are (the vector sentencepiece usually leaves out)."""

    def scramble(m) -> None:
        rng = random.Random(0)
        normal = [p for p in m.pieces if p.type == NORMAL]
        scores = [p.score for p in normal]
        rng.shuffle(scores)
        for p, s in zip(normal, scores, strict=True):
            p.score = s

    fb = _same(serialized_model_proto=_edited(bpe_proto, scramble))
    plain = _same(serialized_model_proto=bpe_proto)
    assert len(fb) > len(plain)


def test_a_large_vocabulary_converts_to_sentencepieces_bytes() -> None:
    """40,000 random pieces: tries of many 256-unit blocks (Darts-clone fixes all but the last
    16 as it goes), and shared suffixes in the DAWG."""
    rng = random.Random(1)
    alphabet = "abcdefghijklmnopqrstuvwxyzé▁漢字"
    m = pb2.ModelProto()
    m.trainer_spec.model_type = pb2.TrainerSpec.UNIGRAM
    m.pieces.add(piece="<unk>", score=0.0, type=pb2.ModelProto.SentencePiece.UNKNOWN)
    seen = {"<unk>"}
    while len(m.pieces) < 40_000:
        piece = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if piece not in seen:
            seen.add(piece)
            m.pieces.add(piece=piece, score=-rng.random() * 20)
    _same(model_proto=m)


def test_files_in_and_out(tmp_path, unigram_proto) -> None:
    model = tmp_path / "m.model"
    model.write_bytes(unigram_proto)
    fb = _same(model_file=str(model))
    out = tmp_path / "m.spm.fb"
    assert ours.ConvertToFlatbuffer(model_file=model, output_file=out) is None
    assert out.read_bytes() == fb
    with pytest.raises(ValueError):
        ours.convert_to_flatbuffer(serialized_model_proto=b"corrupted_proto")
    _same(model_file=str(tmp_path / "missing.model"))


def test_tries_read_back() -> None:
    rng = random.Random(2)
    keys = sorted({bytes(rng.choices(b"ab\xe2\x96\x81", k=n)) for n in range(1, 12) for _ in range(30)} | {b"a"})
    units = darts.build_trie([(k, i * 3) for i, k in enumerate(keys)])
    assert [darts.lookup(units, k) for k in keys] == [i * 3 for i in range(len(keys))]
    assert darts.lookup(units, b"zz") == darts.lookup(units, b"") == -1
    plain = darts.build_keyset_trie(keys)
    assert [darts.lookup(plain, k) for k in keys] == list(range(len(keys)))
    assert len(units) % 256 == len(plain) % 256 == 0
