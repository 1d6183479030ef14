"""Chat templates: a model's own Jinja template (from `tokenizer_config.json` or a string),
rendered with the variables and filters `transformers` provides, in a sandbox; built-in ChatML,
Llama 3 and Mistral templates; and which tokens the assistant wrote (the mask a fine-tuning loss
trains on) for any template. `jinja2` is optional and imported only here.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill import _checks, _core

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# Written for tokenmill after the formats these models use.
BUILTIN_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\\n' }}"
        "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] }}{% endgeneration %}"
        "{% else %}{{ message['content'] }}{% endif %}"
        "{{ '<|im_end|>' + '\\n' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "llama3": (
        "{{ bos_token }}"
        "{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
        "{{ message['content'] | trim }}{{ '<|eot_id|>' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
    ),
    "mistral": (
        "{{ bos_token }}"
        "{% for message in messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
        "{% endif %}"
        "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}"
        "{% else %}{{ raise_exception('Only user and assistant roles are supported') }}{% endif %}"
        "{% endfor %}"
    ),
}


class TemplateError(_core.ConfigError):
    """A chat template that does not compile or that raised an error while rendering."""


def _jinja() -> Any:
    try:
        import jinja2
    except ImportError:
        raise _core.ConfigError("chat templates need jinja2: pip install 'tokenmill[chat]'") from None
    return jinja2


@functools.lru_cache(maxsize=32)
def _compile(template: str) -> Any:
    """The template compiled in the bounded sandbox with transformers' settings (cached:
    templates repeat)."""
    jinja2 = _jinja()
    from jinja2.ext import Extension, loopcontrols

    from tokenmill.chat_sandbox import bounded_environment

    class Generation(Extension):
        """`{% generation %}...{% endgeneration %}` marks text the assistant wrote."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_mark", [], [], None, None)
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _mark(self, caller: Any) -> str:
            text = caller()
            spans = getattr(self.environment.generation_spans, "spans", None)  # type: ignore[attr-defined]
            if spans is not None:
                spans.append(text)
            return text

    def raise_exception(message: str) -> None:
        raise TemplateError(f"the chat template raised: {message}")

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = bounded_environment([Generation, loopcontrols])
    # Per thread: the same compiled template may render in several threads at once.
    env.generation_spans = threading.local()  # type: ignore[attr-defined]
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    try:
        return env.from_string(template)
    except jinja2.TemplateError as e:
        raise TemplateError(f"the chat template does not compile: {e}") from None


def render(template: str, variables: Mapping[str, Any]) -> tuple[str, list[str] | None]:
    """The rendered text, and the texts inside `{% generation %}` blocks in order (None if the
    template has none)."""
    jinja2 = _jinja()
    from tokenmill.chat_sandbox import render_bounded

    compiled = _compile(template)
    spans: list[str] = []
    compiled.environment.generation_spans.spans = spans
    try:
        text = render_bounded(compiled, dict(variables))
    except TemplateError:
        raise
    except jinja2.TemplateError as e:
        raise TemplateError(f"the chat template failed: {e}") from None
    except (ArithmeticError, AttributeError, LookupError, RecursionError, TypeError, ValueError) as e:
        # Python's own failures inside the template (`content + 5`, `range(10**10)`, a macro
        # calling itself, `tojson` of a cyclic value): the template's fault, said as such.
        raise TemplateError(f"the chat template failed: {type(e).__name__}: {e}") from None
    finally:
        compiled.environment.generation_spans.spans = None
    return text, (spans if "{% generation" in template or "{%- generation" in template else None)


def resolve_template(tok: Tokenizer, chat_template: str | None, tools: object = None) -> str:
    """A template string: the one given, a built-in by name, one of the tokenizer's named
    templates, or the tokenizer's own (its `tool_use` template when tools are given and it has
    one, as transformers picks)."""
    named: dict[str, str] = tok._chat.get("named_templates", {})
    if chat_template in named:
        return named[chat_template]
    if chat_template is None and tools and "tool_use" in named:
        return named["tool_use"]
    if chat_template is None:
        chat_template = tok.chat_template
        if chat_template is None:
            raise _core.ConfigError(
                "this tokenizer has no chat template: pass chat_template= (a Jinja string, or one of "
                f"{', '.join(sorted(BUILTIN_TEMPLATES))})"
            )
    if not isinstance(chat_template, str):
        raise _core.ConfigError(f"chat_template must be a str, got {type(chat_template).__name__}")
    return BUILTIN_TEMPLATES.get(chat_template, chat_template)


def read_tokenizer_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The chat template and special-token names of a `tokenizer_config.json` (or of the one
    beside a `tokenizer.json`), or {} when there is none. A `chat_template.jinja` beside it
    takes precedence over the config's template, as in transformers."""
    p = Path(path)
    if p.name != "tokenizer_config.json":
        p = p.with_name("tokenizer_config.json")
    data: dict[str, Any] = {}
    if p.is_file():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise _core.FormatError(f"{p}: not a valid tokenizer_config.json: {e}") from None
        if not isinstance(data, dict):
            raise _core.FormatError(f"{p}: not a valid tokenizer_config.json: not an object")
    out: dict[str, Any] = {}
    template = data.get("chat_template")
    if isinstance(template, list):  # several named templates: "default" is the tokenizer's own
        named = {}
        for k, t in enumerate(template):
            if not (isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)):
                raise _core.FormatError(f"{p}: chat_template[{k}] must be an object with a string name and template")
            named[t["name"]] = t["template"]
        out["named_templates"] = named
        template = named.get("default")
    jinja_file = p.with_name("chat_template.jinja")
    if jinja_file.is_file():
        try:
            template = jinja_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise _core.FormatError(f"{jinja_file}: not a readable UTF-8 template ({e})") from None
    if isinstance(template, str):
        out["chat_template"] = template
    length = data.get("model_max_length")
    # transformers writes 10**30 (its "no limit") where the model has none.
    if isinstance(length, int) and not isinstance(length, bool) and 0 < length < 10**18:
        out["model_max_length"] = length
    for name in ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"):
        value = data.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[name] = value
    return out


def _tokenizing(
    padding: Any, truncation: Any, max_length: Any, return_tensors: Any, tokenizer_kwargs: Any
) -> dict[str, Any] | None:
    """The arguments for tokenizing the rendered chat as transformers passes them to the
    tokenizer's call (None when none is given: the text is encoded as it is)."""
    if tokenizer_kwargs is not None and not isinstance(tokenizer_kwargs, Mapping):
        raise _core.ConfigError(f"tokenizer_kwargs must be a dict, not {type(tokenizer_kwargs).__name__}")
    given = {"padding": padding, "truncation": truncation, "max_length": max_length, "return_tensors": return_tensors}
    if all(v in (False, None) for v in given.values()) and not tokenizer_kwargs:
        return None
    return {**given, **(tokenizer_kwargs or {})}


def _checked_tools(tools: Any) -> list[Any] | None:
    """`tools` as transformers takes them: a list of JSON schemas (dicts), or of functions whose
    schema transformers' `get_json_schema` reads from their signature and docstring."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, (list, tuple)):
        raise _core.ConfigError("tools should be a list of JSON schemas (dicts) or of functions")
    out = []
    for tool in tools:
        if isinstance(tool, Mapping):
            out.append(tool)
        elif callable(tool):
            try:
                from transformers.utils import get_json_schema
            except ImportError:
                raise _core.ConfigError("tools given as functions need transformers (get_json_schema)") from None
            out.append(get_json_schema(tool))
        else:
            raise _core.ConfigError(
                f"tools should either be a JSON schema (a dict) or a function, not {type(tool).__name__}"
            )
    return out


def apply(
    tok: Tokenizer,
    messages: Sequence[Mapping[str, Any]],
    *,
    chat_template: str | None,
    add_generation_prompt: bool,
    continue_final_message: bool,
    tokenize: bool,
    tools: Sequence[Any] | None,
    documents: Sequence[Any] | None,
    return_dict: bool,
    return_assistant_mask: bool,
    inputs: dict[str, Any] | None,
    template_kwargs: Mapping[str, Any],
) -> Any:
    if isinstance(messages, (str, bytes, Mapping)) or not hasattr(messages, "__iter__"):
        raise _core.ConfigError("messages must be a list of dicts with 'role' and 'content'")
    messages = list(messages)  # once: a generator is read here, not consumed by the check
    if not all(isinstance(m, Mapping) for m in messages):
        raise _core.ConfigError("messages must be a list of dicts with 'role' and 'content'")
    tools = _checked_tools(tools)
    if inputs is not None and return_assistant_mask:
        raise _core.ConfigError("return_assistant_mask with padding, truncation or return_tensors is not supported")
    if add_generation_prompt and continue_final_message:
        raise _core.ConfigError("add_generation_prompt and continue_final_message cannot both be set")
    template = resolve_template(tok, chat_template, tools)
    variables = {**tok.chat_tokens, **template_kwargs}
    variables.update(
        messages=list(messages), tools=tools, documents=documents, add_generation_prompt=add_generation_prompt
    )
    text, generated = render(template, variables)
    if continue_final_message:
        final = messages[-1].get("content")
        if not isinstance(final, str) or final.strip() not in text:
            raise _core.ConfigError("continue_final_message: the final message's text is not in the rendered chat")
        # End the text where the final message ends, so generation continues it.
        end = text.rindex(final.strip()) + len(final.strip())
        text = text[:end]
    if not tokenize:
        return text
    if inputs is not None:
        # As transformers: the tokenizer's call on the rendered text, no special tokens added.
        encoded = tok(text, add_special_tokens=False, **inputs)
        return encoded if return_dict else encoded["input_ids"]
    if return_assistant_mask:
        # As transformers: the rendered chat is tokenized without the tokenizer's own truncation
        # and padding (the template already holds the special tokens), offsets for the mask.
        encoded = tok(text, add_special_tokens=False, truncation=False, padding=False, return_offsets_mapping=True)
        ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
    else:
        ids = tok.encode(text, allowed_special="all", disallowed_special=())
    if not (return_dict or return_assistant_mask):
        return ids
    out: dict[str, Any] = {"input_ids": ids, "attention_mask": [1] * len(ids)}
    if return_assistant_mask:
        spans = _assistant_spans(text, messages, generated)
        out["assistant_masks"] = [int(any(s < end and start < e for s, e in spans)) for start, end in offsets]
    return out


def _assistant_spans(
    text: str, messages: Sequence[Mapping[str, Any]], generated: list[str] | None
) -> list[tuple[int, int]]:
    """Character spans of what the assistant wrote: the template's `{% generation %}` blocks
    when it has them, else each assistant message's content, found in order in the text."""
    pieces = (
        generated
        if generated is not None
        else [m["content"] for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
    )
    spans, at = [], 0
    for piece in pieces:
        if not piece:
            continue
        found = text.find(piece, at)
        if found < 0:  # a template that rewrites the content (trim, say): its stripped form
            stripped = piece.strip()
            found = text.find(stripped, at) if stripped else -1
            piece = stripped
        if found >= 0:
            spans.append((found, found + len(piece)))
            at = found + len(piece)
    return spans


class ChatMethods:
    """The chat-template side of `Tokenizer`."""

    __slots__ = ()
    _chat: dict[str, Any]

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
        tokenize: bool = True,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        return_dict: bool = False,
        return_assistant_mask: bool = False,
        padding: bool | str = False,
        truncation: bool | str = False,
        max_length: int | None = None,
        return_tensors: str | None = None,
        tokenizer_kwargs: Mapping[str, Any] | None = None,
        return_assistant_tokens_mask: bool | None = None,
        **template_kwargs: Any,
    ) -> Any:
        """Renders a chat with the model's own Jinja template (from `tokenizer_config.json`, or
        `chat_template` as a string, or a built-in: ``"chatml"``, ``"llama3"``, ``"mistral"``),
        as transformers does; returns the text (``tokenize=False``), the ids, or a dict with
        `input_ids`, `attention_mask` and, with `return_assistant_mask`, `assistant_masks`: 1 for
        each token the assistant wrote (`{% generation %}` blocks where the template has them,
        else the assistant messages' text). Needs jinja2.

        >>> tok.apply_chat_template([{"role": "user", "content": "Hi"}], chat_template="chatml",
        ...                         add_generation_prompt=True, tokenize=False)
        '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
        """
        return apply(
            self,  # type: ignore[arg-type]
            messages,
            chat_template=chat_template,
            add_generation_prompt=_checks.flag("add_generation_prompt", add_generation_prompt),
            continue_final_message=_checks.flag("continue_final_message", continue_final_message),
            tokenize=_checks.flag("tokenize", tokenize),
            tools=tools,
            documents=documents,
            return_dict=_checks.flag("return_dict", return_dict),
            return_assistant_mask=_checks.flag(
                "return_assistant_mask",
                return_assistant_mask if return_assistant_tokens_mask is None else return_assistant_tokens_mask,
            ),
            inputs=_tokenizing(padding, truncation, max_length, return_tensors, tokenizer_kwargs),
            template_kwargs=template_kwargs,
        )

    @property
    def chat_template(self) -> str | None:
        """The tokenizer's own chat template (read from `tokenizer_config.json`), or None."""
        return self._chat.get("chat_template")

    @chat_template.setter
    def chat_template(self, template: str | None) -> None:
        _checks.text("chat_template", template, optional=True)
        if template is None:
            self._chat.pop("chat_template", None)
        else:
            self._chat["chat_template"] = template

    @property
    def chat_tokens(self) -> dict[str, str]:
        """The special-token names a chat template sees (`bos_token`, `eos_token`, ...)."""
        return {k: v for k, v in self._chat.items() if k.endswith("_token")}

    def set_chat_tokens(self, **tokens: str) -> None:
        """Names the special tokens templates use: ``set_chat_tokens(bos_token="<s>")``."""
        for name, value in tokens.items():
            if not name.endswith("_token"):
                raise _core.ConfigError(f"{name}: chat token names end in _token (bos_token, eos_token, ...)")
            self._chat[name] = _checks.text(name, value)
