"""What every component class of `tokenmill.tokenizers` (normalizers, pre-tokenizers, models,
post-processors, decoders) shares: it *is* its `tokenizer.json` node. Attributes read and write
the node's fields, a component set on a `Tokenizer` shares its node with the tokenizer's file
(changing an attribute changes the tokenizer, as in `tokenizers`), and pickling keeps the JSON.

A custom component (`Normalizer.custom(obj)`, ...) is the node `{"type": "Custom", "object": obj}`:
it holds a Python object where a `tokenizer.json` has no place for one, so writing it (a file, a
pickle) is refused, as `tokenizers` refuses it, and the code that runs components runs it in Python.

>>> from tokenmill.tokenizers.normalizers import Strip
>>> s = Strip(left=False)
>>> s.left, s.right, s._node
(False, True, {'type': 'Strip', 'strip_left': False, 'strip_right': True})
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from tokenmill import _core

# family ("normalizer", ...) → JSON type → class, filled as the classes are defined.
_REGISTRY: dict[str, dict[str, type[Component]]] = {}


class Component:
    """A component as its `tokenizer.json` node (`_node`)."""

    _family: ClassVar[str] = ""
    _type: ClassVar[str] = ""
    # Attribute name → the node's key, for fields read and written as they are stored.
    _fields: ClassVar[dict[str, str]] = {}

    _node: dict[str, Any]
    _listeners: list[Callable[[], None]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._type:
            _REGISTRY.setdefault(cls._family, {})[cls._type] = cls

    def _adopt(self, node: dict[str, Any]) -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_listeners", [])

    @classmethod
    def _wrap(cls, node: dict[str, Any] | None) -> Component | None:
        """The component of this family for `node` (None for null), sharing it."""
        if node is None:
            return None
        kind = node.get("type")
        made_by = _REGISTRY.get(cls._family, {}).get(kind) if isinstance(kind, str) else None
        if made_by is None:
            raise _core.FormatError(f"{cls._family} type {kind!r} is not one tokenmill.tokenizers knows")
        made = object.__new__(made_by)  # not the class's own __new__, which takes its options
        made._adopt(node)
        made._after_wrap()
        return made

    def _after_wrap(self) -> None:
        """Set-up a class needs once its node is in place (a Sequence wraps its children)."""

    def _check(self) -> None:
        """Refuses, when it is made, a component tokenmill does not run (families that run one
        alone try it on empty input)."""

    @classmethod
    def _make(cls, node: dict[str, Any]) -> Any:
        """A new component of this class for `node` (the constructors' shared last step; not the
        class's own __new__, which takes its options)."""
        made = object.__new__(cls)
        made._adopt(node)
        made._after_wrap()
        made._check()
        return made

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def __getattr__(self, name: str) -> Any:
        fields = type(self)._fields
        if name in fields and "_node" in self.__dict__:
            return self._node.get(fields[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)  # the property's setter
            return
        fields = type(self)._fields
        if name not in fields:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r} to set")
        self._node[fields[name]] = value
        self._changed()

    def _is_custom(self) -> bool:
        """Whether this component is, or holds, a custom Python one."""
        return has_custom(self._node)

    def __getstate__(self) -> str:
        if self._is_custom():
            raise not_serializable(self._family)
        return json.dumps(self._node, ensure_ascii=False)

    def __setstate__(self, state: str | bytes) -> None:
        self._adopt(json.loads(state))
        self._after_wrap()

    def __reduce__(self) -> tuple[Any, ...]:
        # The classes' own __new__ takes their options: pickle rebuilds from the node instead.
        return (_rebuild, (self._family, self.__getstate__()))

    def __repr__(self) -> str:
        from tokenmill.tokenizers._pythonic import render

        return render(self._node, None)

    def __str__(self) -> str:
        from tokenmill.tokenizers._pythonic import render

        return render(self._node, 5)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Component):
            return NotImplemented
        return type(self) is type(other) and self._node == other._node

    __hash__ = None  # type: ignore[assignment]  # mutable, as its node


def _rebuild(family: str, state: str) -> Component | None:
    node = json.loads(state)
    base = _REGISTRY[family][node["type"]]
    return base._wrap(node)


class Sequence(Component):
    """Components of one family in order, indexable (`seq[0]`, `seq[1] = Strip()`)."""

    _key: ClassVar[str] = ""  # where the children are: "normalizers", "pretokenizers"...

    def _after_wrap(self) -> None:
        children = [type(self)._wrap(node) for node in self._node.get(self._key, [])]
        object.__setattr__(self, "_children", children)
        for child in children:
            assert child is not None
            child._listeners.append(self._changed)

    @classmethod
    def _of(cls, children: list[Any]) -> Any:
        """A new Sequence of `children` (each Sequence class's constructor)."""
        made = object.__new__(cls)
        made._adopt({"type": "Sequence", cls._key: []})
        made._set_children(list(children))
        made._check()
        return made

    def _set_children(self, children: list[Component]) -> None:
        for child in children:
            if not isinstance(child, Component) or child._family != self._family:
                raise TypeError(f"a {self._family} Sequence holds {self._family}s, not {child!r:.60}")
        # In place: the node may be shared with a tokenizer's file.
        self._node[self._key] = [c._node for c in children]
        self._after_wrap()

    def __getitem__(self, index: int) -> Component:
        return self.__dict__["_children"][index]  # type: ignore[no-any-return]

    def __setitem__(self, index: int, value: Component) -> None:
        children = list(self.__dict__["_children"])
        children[index] = value  # IndexError outside, as a list
        self._set_children(children)
        self._changed()

    def __len__(self) -> int:
        return len(self.__dict__["_children"])


class Regex:
    """A regular expression for a `Replace` or `Split` pattern (a plain str is matched literally).

    >>> Regex("[0-9]+").pattern
    '[0-9]+'
    """

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise TypeError(f"Regex takes a str, not {type(pattern).__name__}")
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"


def pattern_node(pattern: object) -> dict[str, str]:
    """A `Replace`/`Split` pattern: a str is literal, a `Regex` a regular expression."""
    if isinstance(pattern, Regex):
        return {"Regex": pattern.pattern}
    if isinstance(pattern, str):
        return {"String": pattern}
    raise TypeError(f"pattern must be a str or a tokenizers Regex, not {type(pattern).__name__}")


CUSTOM = "Custom"

# Each family's name as tokenizers' messages spell it.
_FAMILY_NAMES = {"normalizer": "Normalizer", "pre_tokenizer": "PreTokenizer", "decoder": "Decoder"}
# Where a Sequence node holds its children, per family.
_CHILDREN = ("normalizers", "pretokenizers", "decoders")


def register_custom(base: type[Component]) -> None:
    """Makes `base` (a family's base class) the class of that family's custom nodes, as
    tokenizers gives a custom component its family's base class."""
    _REGISTRY.setdefault(base._family, {})[CUSTOM] = base


def custom_node(obj: Any) -> dict[str, Any]:
    return {"type": CUSTOM, "object": obj}


def has_custom(node: Any) -> bool:
    """Whether a component node is, or holds, a custom one."""
    if not isinstance(node, dict):
        return False
    if node.get("type") == CUSTOM:
        return True
    return any(has_custom(child) for key in _CHILDREN for child in node.get(key) or ())


def not_serializable(family: str) -> _core.ConfigError:
    name = _FAMILY_NAMES.get(family, family)
    return _core.ConfigError(
        f"Custom {name} cannot be serialized: a custom Python {name} has no tokenizer.json form, so it cannot be "
        "saved, written as text or pickled (tokenizers refuses it too); set a built-in one before saving"
    )


def call_custom(family: str, obj: Any, method: str, *args: Any) -> Any:
    """`obj.method(*args)`: what a custom component's code raises comes back as a ConfigError
    chained to it, its message ending as tokenizers reports it (`... raised TypeError: ...`)."""
    try:
        return getattr(obj, method)(*args)
    except _core.ConfigError as e:
        if getattr(e, "_from_custom", False):
            raise  # a custom component inside this one already said what went wrong
        raise _wrapped(family, method, e) from e
    except Exception as e:
        raise _wrapped(family, method, e) from e


def _wrapped(family: str, method: str, error: Exception) -> _core.ConfigError:
    name = _FAMILY_NAMES.get(family, family)
    wrapped = _core.ConfigError(f"the custom {name}'s `{method}` raised {type(error).__name__}: {error}")
    wrapped._from_custom = True  # type: ignore[attr-defined]
    return wrapped
