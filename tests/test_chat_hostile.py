"""Chat templates made of any expressions — arithmetic on huge numbers, repeated and joined strings,
padding filters, str methods, nested and recursive loops, macros calling themselves — render or
raise a `TemplateError`, each in a child with memory and time limits: a crash, a bare exception,
a hang or a memory blow-up fails the test. The sandbox bounds each render (`chat_sandbox`)."""

from __future__ import annotations

import pytest
from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill.chat import TemplateError

pytest.importorskip("jinja2")

MESSAGES = [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}]
ATOMS = st.sampled_from(
    [
        "0", "1", "2", "7", "-3", "10", "64", "1000", "10**6", "10**9", "10**10", "10**100", "2.5", "1e308",
        "'a'", "''", "'ab'", "'\\t'", "'%s'", "'%*d'", "'{}'", "'{:>{}}'", "'{x}'",
        "messages", "messages[0]", "messages[0]['content']", "messages[-1].role", "[1, 2]", "[]",
        "{'x': 1}", "range(100000)", "range(10)", "none", "true", "ns.v", "namespace(v=1)", "loop",
    ]
)  # fmt: skip
BINARY = ["+", "-", "*", "/", "//", "%", "**", "~", "==", "in", "and", "or"]
FILTERS = [
    "length", "upper", "list", "join", "join(', ')", "tojson", "tojson(indent=2)", "tojson(indent=10**9)",
    "center(10**9)", "center(20)", "indent(10**9)", "indent(4)", "wordwrap(3)", "replace('', 'xy')",
    "replace('a', 'b' * 100)", "format(1, 2)", "batch(3)|list", "sum", "first", "reverse", "string",
    "int", "float", "trim", "unique|list", "sort", "map('upper')|list", "items|list", "escape", "truncate(5)",
]  # fmt: skip
METHODS = [
    "upper()", "ljust(10**9)", "ljust(8)", "zfill(10**8)", "center(30)", "expandtabs(10**8)",
    "replace('', 'abc')", "split()", "join(['a', 'b'])", "format(1, 10**9)", "format(x=2)", "strip()",
    "startswith('a')", "count('a')", "title()",
]  # fmt: skip


def expressions() -> st.SearchStrategy[str]:
    return st.recursive(
        ATOMS,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, st.sampled_from(FILTERS)).map(lambda t: f"({t[0]}|{t[1]})"),
            st.tuples(inner, st.sampled_from(METHODS)).map(lambda t: f"{t[0]}.{t[1]}"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(inner, inner).map(lambda t: f"[{t[0]}, {t[1]}]"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        ),
        max_leaves=6,
    )


def statements() -> st.SearchStrategy[str]:
    expr = expressions()
    return st.recursive(
        expr.map(lambda e: "{{ " + e + " }}"),
        lambda inner: st.one_of(
            st.tuples(expr, inner).map(lambda t: "{% for x in " + t[0] + " %}" + t[1] + "{% endfor %}"),
            st.tuples(expr, inner).map(
                lambda t: "{% for x in " + t[0] + " recursive %}" + t[1] + "{{ loop(x) }}{% endfor %}"
            ),
            st.tuples(expr).map(lambda t: "{% set ns.v = " + t[0] + " %}"),
            st.tuples(expr, inner).map(lambda t: "{% if " + t[0] + " %}" + t[1] + "{% endif %}"),
            st.tuples(inner).map(lambda t: "{% macro f(n) %}" + t[0] + "{{ f(n ~ n) }}{% endmacro %}{{ f('a') }}"),
            st.lists(inner, min_size=2, max_size=3).map("".join),
        ),
        max_leaves=4,
    )  # fmt: skip


_TOKENIZER = tokenmill.train_bpe(iter(["hello world, hi there"]), vocab_size=270)


def _render(template: str) -> int:
    """Run in a bounded child: the template renders, or is a TemplateError."""
    text = _TOKENIZER.apply_chat_template(MESSAGES, chat_template=template, tokenize=False)
    return len(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=statements())
def test_any_template_renders_or_is_a_template_error(body: str) -> None:
    template = "{% set ns = namespace(v=1) %}" + body
    expect_clean(bounded(_render, template, seconds=60), (TemplateError,), template)


@pytest.mark.parametrize(
    "template",
    [
        "{% set ns = namespace(s='a') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{{ 'a'.ljust(10**10) }}",
        "{{ '{:>10000000000}'.format(1) }}",
        "{{ '{x:>{w}}'.format_map({'x': 1, 'w': 10**10}) }}",
        "{{ '%*d' % (10**10, 1) }}",
        "{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
        "{% for m in messages recursive %}{{ loop(messages + messages) }}{% endfor %}",
        "{% set s = 'a' * 1000000 %}{% for i in range(100000) %}{{ s|upper|length }}{% endfor %}",
        "{{ ('a' * 1000000)|replace('a', 'b' * 50) }}",
        "{{ messages|tojson(indent=10**9) }}",
        "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
    ],
)
def test_templates_that_would_run_for_ever_or_fill_memory_are_refused(template: str) -> None:
    outcome = bounded(_render, template, seconds=60)
    assert outcome.error == "TemplateError", outcome


def test_ordinary_work_stays_within_the_bounds() -> None:
    template = (
        "{% for m in messages %}{{ m['role'] ~ ': ' ~ m['content'] | trim }}\n{% endfor %}"
        "{{ '{:>5}'.format(3) }}{{ 'ab' * 3 }}{{ messages | tojson(indent=2) | length > 0 }}"
        "{% for i in range(1000) %}{{ i }}{% endfor %}"
    )
    text = _TOKENIZER.apply_chat_template(MESSAGES, chat_template=template, tokenize=False)
    assert text.startswith("user: hi there\nassistant: hello\n    3ababab")
