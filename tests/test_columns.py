"""Arrow columns, Parquet files and Hugging Face datasets as corpora: counts equal those of the
same documents given as strings, whatever the column's layout (sliced, nulls, large, chunked)."""

from __future__ import annotations

import pytest

from tokenmill import CorpusError, FormatError, count_words
from tokenmill.columns import column_buffers

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def docs(stdlib_text, multilingual_text):
    parts = [stdlib_text[i : i + 700] for i in range(0, 200_000, 700)]
    return parts + multilingual_text.split("\n") + ["", "x"]


def test_column_buffers_hand_checked():
    data, offsets, width = column_buffers(pa.array(["ab", None, "cde"]))
    assert (data, width) == (b"abcde", 4)
    assert [int.from_bytes(offsets[i : i + 4], "little") for i in range(0, 16, 4)] == [0, 2, 2, 5]
    # A slice passes only its own bytes, offsets from 0.
    data, offsets, width = column_buffers(pa.array(["zz", "ab", "c", "yyy"], type=pa.large_string()).slice(1, 2))
    assert (data, width) == (b"abc", 8)
    assert [int.from_bytes(offsets[i : i + 8], "little") for i in range(0, 24, 8)] == [0, 2, 3]
    assert column_buffers(pa.array([], type=pa.string())) == (b"", b"\0\0\0\0", 4)


def test_a_null_whose_slot_holds_bytes_is_an_empty_document():
    # Arrow allows a null slot to span bytes: here the null covers "hidden".
    offsets = pa.array([0, 2, 8, 9], type=pa.int32()).buffers()[1]
    validity = pa.array([True, False, True]).buffers()[1]
    arr = pa.Array.from_buffers(pa.string(), 3, [validity, offsets, pa.py_buffer(b"abhiddenc")])
    assert arr.to_pylist() == ["ab", None, "c"]
    assert count_words(arr, pattern="whitespace") == count_words(iter(["ab", "c"]), pattern="whitespace")


@pytest.mark.parametrize("kind", ["string", "large_string", "string_view", "dictionary", "chunked", "sliced"])
def test_arrow_layouts_count_like_the_strings(docs, kind):
    expected = count_words(iter(docs))
    if kind == "string_view" and not hasattr(pa, "string_view"):
        pytest.skip("this pyarrow has no string_view")
    if kind == "chunked":
        column = pa.chunked_array([docs[:50], docs[50:51], docs[51:]])
    elif kind == "sliced":
        column = pa.array(["drop me"] + docs + ["and me"]).slice(1, len(docs))
    elif kind == "dictionary":
        column = pa.array(docs).dictionary_encode()
    else:
        column = pa.array(docs, type=getattr(pa, kind)())
    assert count_words(column) == expected
    assert count_words(pa.table({"id": range(len(docs)), "text": column})) == expected


def test_parquet_files_count_like_the_strings(tmp_path, docs):
    for i, chunk in enumerate((docs[:100], docs[100:])):
        pq.write_table(pa.table({"text": chunk}), tmp_path / f"p{i}.parquet", row_group_size=30)
    assert count_words(str(tmp_path / "*.parquet")) == count_words(iter(docs))
    pq.write_table(pa.table({"body": docs}), tmp_path / "b.parquet")
    assert count_words(tmp_path / "b.parquet", text_field="body", pattern="gpt2") == count_words(
        iter(docs), pattern="gpt2"
    )


def test_dicts_count_like_the_strings(docs):
    assert count_words({"text": d, "n": i} for i, d in enumerate(docs)) == count_words(iter(docs))
    assert count_words([{"body": "a b"}, {"body": None}], text_field="body") == count_words(iter(["a b"]))
    with pytest.raises(CorpusError, match=r"corpus item 1 has no field 'text' \(fields: 'body'\); pass text_field="):
        count_words([{"text": "a"}, {"body": "b"}])
    with pytest.raises(CorpusError, match="corpus item 0: field 'text' is int, expected str"):
        count_words([{"text": 3}])


def test_hugging_face_datasets_count_like_the_strings(docs):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"text": docs, "n": list(range(len(docs)))})
    expected = count_words(iter(docs))
    assert count_words(ds) == expected
    # A selection (an indices mapping over the table) counts only the rows it holds.
    picked = ds.select(range(0, len(docs), 3))
    assert count_words(picked) == count_words(iter(docs[::3]))
    # An IterableDataset yields dicts.
    assert count_words(ds.to_iterable_dataset()) == expected
    with pytest.raises(FormatError, match="the dataset has no column 'body'"):
        count_words(ds, text_field="body")


def test_a_column_that_is_not_text(tmp_path):
    with pytest.raises(FormatError, match="the text column holds int64, not strings"):
        count_words(pa.table({"text": [1, 2]}))
    with pytest.raises(FormatError, match=r"the Arrow table: no column 'text' \(columns: 'a'\)"):
        count_words(pa.table({"a": ["x"]}))
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "n.parquet")
    with pytest.raises(FormatError, match=r"n\.parquet: column 'text' holds int64, not strings"):
        count_words(tmp_path / "n.parquet")
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "n.parquet").read_bytes()[:-20])
    with pytest.raises(FormatError, match=r"cut\.parquet: not a Parquet file"):
        count_words(tmp_path / "cut.parquet")
