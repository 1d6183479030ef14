"""Understand a tokenizer: what it does to text, not only how to run it.

Every function takes any tokenizer tokenmill can load (a `Tokenizer`, an OpenAI encoding name,
a ``tokenizer.json``, a SentencePiece ``.model``, a tokenmill file; see `load_tokenizer`) and
returns plain data (dataclasses with ``to_dict()`` and ``format()``); `tokenmill.analysis.plots`
draws them with matplotlib.

>>> from tokenmill import analysis
>>> table = analysis.fertility(["cl100k_base", "o200k_base"], {"en": "en.txt", "ja": "ja.txt"})
>>> print(table.format())
tokenizer    group  bytes  words  tokens  bytes/token  chars/token  tokens/word  byte-token %  unk %
-----------  -----  -----  -----  ------  -----------  -----------  -----------  ------------  -----
cl100k_base  en     79     16     19      4.158        4.158        1.188        0.00          0.00
cl100k_base  ja     102    30     34      3.000        1.059        1.133        11.76         0.00
cl100k_base  (all)  181    46     53      3.415        2.170        1.152        6.63          0.00
o200k_base   en     79     16     19      4.158        4.158        1.188        0.00          0.00
o200k_base   ja     102    30     26      3.923        1.385        0.867        0.00          0.00
o200k_base   (all)  181    46     45      4.022        2.556        0.978        0.00          0.00
"""

from tokenmill.analysis._load import load_tokenizer, load_tokenizers
from tokenmill.analysis._words import WORD_PATTERN, count_words_in, split_words
from tokenmill.analysis.audit import AuditEntry, AuditReport, audit_tokens
from tokenmill.analysis.cost import TokenCount, TokenCountReport, count_tokens
from tokenmill.analysis.embeddings import unused_similarity
from tokenmill.analysis.fertility import FertilityRow, FertilityTable, ParallelPremium, fertility, parallel_premium
from tokenmill.analysis.numbers import NumberReport, NumberSplitRow, number_splits
from tokenmill.analysis.sweep import SweepRow, VocabSweep, efficiencies, vocab_sweep
from tokenmill.analysis.visualize import TokenPiece, TokenView, token_pieces, token_views, tokens_html, tokens_terminal

__all__ = [
    "WORD_PATTERN",
    "AuditEntry",
    "AuditReport",
    "FertilityRow",
    "FertilityTable",
    "NumberReport",
    "NumberSplitRow",
    "ParallelPremium",
    "SweepRow",
    "TokenCount",
    "TokenCountReport",
    "TokenPiece",
    "TokenView",
    "VocabSweep",
    "audit_tokens",
    "count_tokens",
    "count_words_in",
    "efficiencies",
    "fertility",
    "load_tokenizer",
    "load_tokenizers",
    "number_splits",
    "parallel_premium",
    "split_words",
    "token_pieces",
    "token_views",
    "tokens_html",
    "tokens_terminal",
    "unused_similarity",
    "vocab_sweep",
]
