"""The sandbox chat templates render in: jinja2's immutable sandbox (no route to Python internals,
no mutation of the messages) with the work of one render bounded by what a chat template could
need, so a small template cannot run for ever or fill the memory.

- Every loop iteration and every call in the template spends a step from a budget of
  `LARGEST_STEPS` per render (loops are rewritten at compile time to iterate through
  `_steps`; recursive loops and macros are calls), and a render stops after `LARGEST_SECONDS`.
- No string, list or number the template makes grows past `LARGEST_TEXT` characters or items
  (`LARGEST_INT_BITS` bits): `~`, `+` (of two values that are not literals), `*`, `**`, `%`,
  the padding and joining filters and str methods are checked before they run, and the
  rendered text is counted as it is made.
- What the template makes and what filters and methods read is charged to a budget of
  `LARGEST_MADE` characters, so a loop cannot keep making large strings.

Imported only when a template is compiled (it needs jinja2).

>>> bounded_environment().from_string("{{ 'ab' * 3 }}").render()
'ababab'
"""

from __future__ import annotations

import itertools
import json
import operator
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.visitor import NodeTransformer

LARGEST_STEPS = 10_000_000
LARGEST_SECONDS = 10.0
LARGEST_TEXT = 1 << 24
LARGEST_MADE = 1 << 28
LARGEST_INT_BITS = 1 << 16
LARGEST_POWER_BITS = 4096

_budget = threading.local()
# A width or count written in a format string (`{:>100000000}`, `%100000000d`) or taken from
# an argument (`{:{}}`, `%*d`).
_LONG_NUMBER = re.compile(r"\d{8,}")
_WIDTH_FROM_ARGUMENT = re.compile(r"%[-+ #0]*\*|\{[^{}]*\{")


class Budget:
    """What one render may still spend (one per thread: renders may run in several at once)."""

    def __init__(self) -> None:
        self.steps = LARGEST_STEPS
        self.made = LARGEST_MADE
        self.deadline = time.monotonic() + LARGEST_SECONDS
        # One tick per loop iteration, shared by every loop of the render.
        self.ticks = itertools.chain.from_iterable(self._tick_blocks())

    def step(self) -> None:
        self.steps -= 1
        # The clock every 256 steps: a step is small (large work is charged to `made`).
        if not self.steps & 255:
            if self.steps < 0:
                raise SecurityError(f"the template ran more than {LARGEST_STEPS:,} loop iterations and calls")
            if time.monotonic() > self.deadline:
                raise SecurityError(f"the template ran for more than {LARGEST_SECONDS:.0f} seconds")

    def _tick_blocks(self) -> Iterator[Iterator[None]]:
        """Ticks in blocks of 256 (made at C speed), the clock read between blocks."""
        for _ in range(LARGEST_STEPS // 256):
            if time.monotonic() > self.deadline:
                raise SecurityError(f"the template ran for more than {LARGEST_SECONDS:.0f} seconds")
            yield itertools.repeat(None, 256)
        raise SecurityError(f"the template ran more than {LARGEST_STEPS:,} loop iterations")

    def charge(self, size: int) -> None:
        self.made -= size
        if self.made < 0:
            raise SecurityError(f"the template made or read more than {LARGEST_MADE:,} characters")


def start_render() -> Budget:
    _budget.current = Budget()
    return _budget.current


def _current() -> Budget:
    budget = getattr(_budget, "current", None)
    if budget is None:  # rendered outside `render` (a test, a doctest): a fresh budget
        budget = start_render()
    return budget


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _size(x: Any) -> int:
    return len(x) if isinstance(x, (str, list, tuple)) else 0


def _check_size(n: int, what: str) -> None:
    if n > LARGEST_TEXT:
        raise SecurityError(f"{what} of {n:,} characters or items is larger than a chat template needs")


def _steps(iterable: Iterable[Any]) -> Iterator[Any]:
    """A loop's iterable, each item paid for from the render's budget: zipped with the budget's
    ticks, all at C speed (a generator here cost a frame per item)."""
    return map(_first, zip(iterable, _current().ticks, strict=False))


_first = operator.itemgetter(0)


def _concat(*parts: Any) -> str:
    """`a ~ b ~ ...`, its length checked before it is made."""
    texts = [str(p) for p in parts]
    size = sum(map(len, texts))
    _check_size(size, "a joined string")
    _current().charge(size)
    return "".join(texts)


def _add(left: Any, right: Any) -> Any:
    """`a + b` of two values that are not literals: made, then checked (a sum is at most twice
    its larger operand, which was checked when it was made)."""
    result = left + right
    if isinstance(result, (str, list, tuple)):
        _check_size(len(result), "a sum")
        budget = _current()
        budget.charge(len(result))
        if isinstance(right, (list, tuple)):  # what a list grows by holds: charged too
            budget.charge(sum(len(x) for x in right if isinstance(x, str)))
    return result


def _check_format(fmt: str, args: Iterable[Any]) -> None:
    """Refuses a format whose widths would make a string past `LARGEST_TEXT`."""
    if _LONG_NUMBER.search(fmt):
        raise SecurityError("a format width or precision this large is more than a chat template needs")
    if _WIDTH_FROM_ARGUMENT.search(fmt) and any(_whole(a) and abs(a) > LARGEST_TEXT for a in args):
        raise SecurityError("a format width this large is more than a chat template needs")


def _check_str_method(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Pre-checks the str methods whose result can be far longer than their inputs."""
    values = [*args, *kwargs.values()]
    if name in ("ljust", "rjust", "center", "zfill") and values and _whole(values[0]):
        _check_size(values[0], f"str.{name}")
    elif name == "expandtabs":
        size = values[0] if values and _whole(values[0]) else 8
        _check_size(len(text) + text.count("\t") * max(size, 0), "str.expandtabs")
    elif name == "replace" and len(values) >= 2 and isinstance(values[0], str) and isinstance(values[1], str):
        _check_replace(text, values[0], values[1])
    elif name == "join" and values:
        _check_join(text, values[0])
    elif name in ("format", "format_map"):
        mapped = values[0].values() if name == "format_map" and values and isinstance(values[0], Mapping) else []
        _check_format(text, [*values, *mapped])


def _check_replace(text: str, old: str, new: str) -> None:
    count = len(text) + 1 if old == "" else text.count(old)
    _check_size(len(text) + count * max(len(new) - len(old), 0), "str.replace")


def _check_join(separator: str, items: Any) -> None:
    if isinstance(items, (list, tuple)):
        _check_size(sum(len(x) if isinstance(x, str) else 1 for x in items) + len(separator) * len(items), "a join")


class _BoundLoops(NodeTransformer):
    """Rewrites each `for` to iterate through `_steps`, each `~` to `_concat`, and each `+` of
    two values that are not literals to `_add` — as filters, which the compiled template calls
    directly (a call node would go through the sandbox's checks)."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, "_steps", [], [], None, None, lineno=node.lineno)
        return node

    def visit_Add(self, node: nodes.Add) -> nodes.Node:
        # Adding a constant grows a value by a fixed amount per evaluation, and evaluations are
        # steps; only two values that may both be large can double one, so only those are checked
        # (most of a template's `+` join a literal: left as they are, they cost nothing more).
        self.generic_visit(node)
        if isinstance(node.left, nodes.Const) or isinstance(node.right, nodes.Const):
            return node
        return nodes.Filter(node.left, "_add", [node.right], [], None, None, lineno=node.lineno)

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node.nodes[0], "_concat", node.nodes[1:], [], None, None, lineno=node.lineno)


class BoundedSandbox(ImmutableSandboxedEnvironment):  # type: ignore[misc]
    """jinja2's immutable sandbox with each render's work bounded (see the module's docstring)."""

    intercepted_binops = frozenset({"**", "*", "%"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        return _BoundLoops().visit(super()._parse(source, name, filename))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        self._check_binop(operator, left, right)
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, (str, list, tuple)):
            size = len(result)
            _check_size(size, "a result")
            _current().charge(size)
        return result

    @staticmethod
    def _check_binop(operator: str, left: Any, right: Any) -> None:
        if operator == "**" and _whole(left) and _whole(right) and abs(left) > 1 and right > 0:
            if right * abs(left).bit_length() > LARGEST_POWER_BITS:
                raise SecurityError(f"{left} ** {right} is larger than a chat template needs")
        elif operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and _whole(times) and len(seq) * times > LARGEST_TEXT:
                    raise SecurityError(f"a sequence of {len(seq)} repeated {times} times is too long")
            if _whole(left) and _whole(right) and left.bit_length() + right.bit_length() > LARGEST_INT_BITS:
                raise SecurityError("a product this large is more than a chat template needs")
        elif operator == "%" and isinstance(left, str):
            _check_format(left, right if isinstance(right, tuple) else [right])

    def wrap_str_format(self, value: Any) -> Any:
        # `'...'.format` is wrapped by jinja2 when it is looked up, so `call` never sees the str.
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text, name = value.__self__, value.__name__

        def checked(*args: Any, **kwargs: Any) -> str:
            _check_str_method(name, text, args, kwargs)
            _current().charge(len(text))
            return wrapped(*args, **kwargs)  # type: ignore[no-any-return]

        return checked

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja2's signature
        budget = _current()
        budget.step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            _check_str_method(getattr(__obj, "__name__", ""), owner, args, kwargs)
            budget.charge(len(owner))
        elif isinstance(__obj, LoopContext) and args:  # a recursive loop's next level
            args = (_steps(args[0]), *args[1:])
        return super().call(__context, __obj, *args, **kwargs)


# Filters whose result is no larger than their input and which read little of it, left as they
# are: templates call them on every message (`content | trim`), and a wrapper costs a frame.
_SMALL_RESULTS = frozenset(
    {"trim", "length", "count", "first", "last", "default", "d", "safe", "int", "float", "abs", "round", "bool"}
)


def _bounded_filters(env: BoundedSandbox) -> None:
    """Wraps every filter to charge what it reads, and those that can make a string far longer
    than their input to check first."""
    filters = env.filters

    def wrap(name: str, check: Any) -> None:
        inner = filters[name]
        # A filter marked to take the environment or context gets it first; the check does not.
        skip = 1 if hasattr(inner, "jinja_pass_arg") else 0

        def bounded(*args: Any, **kwargs: Any) -> Any:
            if check is not None:
                check(*args[skip:], **kwargs)
            if len(args) > skip:
                value = args[skip]
                # Reading a short value costs no more than the step that led here.
                if isinstance(value, (str, list, tuple)) and len(value) > 1024:
                    _current().charge(len(value))
            return inner(*args, **kwargs)

        bounded.__name__ = inner.__name__
        if skip:
            bounded.jinja_pass_arg = inner.jinja_pass_arg  # type: ignore[attr-defined]
        filters[name] = bounded

    def text_of(args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        return (str(args[0]) if args else ""), args[1:]

    def center(*args: Any, **kwargs: Any) -> None:
        _, rest = text_of(args)
        width = kwargs.get("width", rest[0] if rest else 80)
        if _whole(width):
            _check_size(width, "the center filter")

    def indent(*args: Any, **kwargs: Any) -> None:
        text, rest = text_of(args)
        width = kwargs.get("width", rest[0] if rest else 4)
        if _whole(width):
            _check_size(len(text) + (text.count("\n") + 1) * width, "the indent filter")
        elif isinstance(width, str):
            _check_size(len(text) + (text.count("\n") + 1) * len(width), "the indent filter")

    def wordwrap(*args: Any, **kwargs: Any) -> None:
        text, rest = text_of(args)
        wrapstring = kwargs.get("wrapstring", rest[2] if len(rest) > 2 else "\n")
        if isinstance(wrapstring, str):
            _check_size(len(text) * (1 + len(wrapstring)), "the wordwrap filter")

    def replace(*args: Any, **kwargs: Any) -> None:
        text, rest = text_of(args)
        if len(rest) >= 2 and isinstance(rest[0], str) and isinstance(rest[1], str):
            _check_replace(text, rest[0], rest[1])

    def join(*args: Any, **kwargs: Any) -> None:
        if args and isinstance(args[0], (list, tuple)):
            separator = kwargs.get("d", args[1] if len(args) > 1 else "")
            if isinstance(separator, str):
                _check_join(separator, args[0])

    def format_filter(*args: Any, **kwargs: Any) -> None:
        fmt, rest = text_of(args)
        _check_format(fmt, [*rest, *kwargs.values()])

    checks = {
        "center": center,
        "indent": indent,
        "wordwrap": wordwrap,
        "replace": replace,
        "join": join,
        "format": format_filter,
    }
    for name in list(filters):
        if name not in _SMALL_RESULTS:
            wrap(name, checks.get(name))


def tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    """transformers' `tojson` (not HTML-escaped, keys in order), its indent bounded."""
    if _whole(indent) and indent > 64:
        raise SecurityError(f"a JSON indent of {indent} is more than a chat template needs")
    if isinstance(indent, str) and len(indent) > 64:
        raise SecurityError("a JSON indent this long is more than a chat template needs")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def bounded_environment(extensions: list[Any] | None = None) -> BoundedSandbox:
    """An environment with transformers' settings and every render bounded."""
    env = BoundedSandbox(trim_blocks=True, lstrip_blocks=True, extensions=extensions or [])
    env.filters["tojson"] = tojson
    _bounded_filters(env)
    env.filters.update(_steps=_steps, _concat=_concat, _add=_add)
    return env


def render_bounded(template: Any, variables: dict[str, Any]) -> str:
    """Renders with a fresh budget, the output counted as it is made."""
    budget = start_render()
    out: list[str] = []
    left = LARGEST_TEXT
    # The compiled root function itself, not `generate`'s wrapper around it (a frame per piece).
    for piece in template.root_render_func(template.new_context(variables)):
        left -= len(piece)
        if left < 0:
            raise SecurityError(f"the rendered text passed {LARGEST_TEXT:,} characters")
        out.append(piece)
    budget.charge(LARGEST_TEXT - left)
    return "".join(out)
