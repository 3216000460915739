"""The plugin contract's reference pages, rendered from the code that is the contract.

Loaded by ``docs/gen.py``, which splices what :func:`hooks_markdown` and :func:`ports_markdown`
return between the markers of ``docs/reference/hooks.md`` and ``docs/reference/ports.md``:

* **hooks** -- one section per hook of :mod:`agentdeck.plugins.hookspecs`, in the module's order
  and under its banner groups (the ``# ---- <title>`` comments and the lines under them): the
  hook's signature, its docstring, the ``register`` callback its implementation receives, the port
  what it registers must be, and the hook's runnable example, ``docs/examples/hooks/<hook>.py``,
  included whole. A hook without an example file is a :class:`GenerationError`, so the page
  cannot be generated with a hole in it; the examples run in the docs harness (the page's python
  blocks) and on their own (``tests/test_docs_reference.py``).
* **ports** -- every name :mod:`agentdeck.ports` exports, grouped by the module that defines it
  (the order of :data:`FAMILIES`): kind and bases, docstring, fields or attributes with their
  attribute docstrings, and each public method with its signature and contract docstring. A
  public method without a docstring, or an exported name outside every family, is a
  :class:`GenerationError`: the docstrings *are* the contract.

Types and defaults are shown as the source spells them (read with :mod:`ast`), so the pages say
exactly what a reader of the code sees.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

DOCS = Path(__file__).resolve().parent
EXAMPLES = DOCS / "examples" / "hooks"

FAMILIES = (
    ("stores", "Event store"),
    ("control", "Control and leases"),
    ("engines", "Engines"),
    ("surfaces", "Observers and bindings"),
    ("execution", "Where runs execute"),
    ("backends", "Backend requests, sessions and checkpoints"),
)
"""The modules of ``agentdeck.ports``, in page order, with their section titles."""

_BANNER = re.compile(r"^# -{10,} (?P<title>.+)$")
_HOOK = re.compile(r"^def (?P<name>agentdeck_\w+)\(")
_ROLE = re.compile(r":(?P<role>[a-z]+):`(?P<tilde>~?)(?P<target>[^`]+)`")
_PARAM = re.compile(r"^:param (?P<name>\w+):\s*(?P<text>.*)$")


class GenerationError(Exception):
    """The code cannot be rendered faithfully (an undocumented member, a hook without example)."""


# =========================================================================== docstrings


Linker = Callable[[str, str], str | None]
"""``(role, dotted target) -> Markdown link target`` for a reference, or ``None`` for none."""


def markdown(doc: str, link: Linker) -> str:
    """A docstring as Markdown: roles become code (linked where ``link`` knows a target),
    ````code```` becomes `code`, ``:param x:`` entries a bold name, ``::`` blocks fenced text."""
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        param = _PARAM.match(line)
        if param:
            text = [param["text"]]
            i += 1
            while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
                text.append(lines[i].strip())
                i += 1
            out.append(f"**`{param['name']}`**: " + " ".join(text))
            continue
        if line.endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            out.append(line[:-1])
            block: list[str] = []
            i += 2
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            out += ["", "```text", textwrap.dedent("\n".join(block)).strip("\n"), "```", ""]
            continue
        out.append(line)
        i += 1
    return _inline("\n".join(out).strip(), link)


def _inline(text: str, link: Linker) -> str:
    def role(match: re.Match[str]) -> str:
        target = match["target"]
        shown = target.rsplit(".", 1)[-1] if match["tilde"] else target  # as Sphinx shows it
        href = link(match["role"], target)
        return f"[`{shown}`]({href})" if href else f"`{shown}`"

    pieces = re.split(r"(``[^`]+``)", text)
    return "".join(
        f"`{piece[2:-2]}`" if piece.startswith("``") else _ROLE.sub(role, piece) for piece in pieces
    )


def _anchor(*parts: str) -> str:
    return "-".join(part.lower() for part in parts)


# =========================================================================== hooks


def hook_groups(module: ModuleType) -> list[tuple[str, str, list[str]]]:
    """``(title, intro, hook names)`` per banner of the hookspecs module, in source order."""
    groups: list[tuple[str, list[str], list[str]]] = []
    source = inspect.getsource(module).splitlines()
    for index, line in enumerate(source):
        banner = _BANNER.match(line)
        if banner:
            intro = []
            for follow in source[index + 1 :]:
                if not follow.startswith("# "):
                    break
                intro.append(follow[2:])
            groups.append((banner["title"], intro, []))
            continue
        hook = _HOOK.match(line)
        if hook:
            if not groups:
                raise GenerationError(f"hook {hook['name']} comes before any banner group")
            groups[-1][2].append(hook["name"])
    return [(title, " ".join(intro), hooks) for title, intro, hooks in groups if hooks]


def hook_names(module: ModuleType) -> list[str]:
    """Every hook the module specifies (what pluggy would register), sorted."""
    return sorted(
        name
        for name, value in vars(module).items()
        if name.startswith("agentdeck_") and callable(value)
    )


def example_path(hook: str) -> Path:
    """Where a hook's runnable example lives."""
    return EXAMPLES / f"{hook}.py"


def hooks_markdown() -> str:
    """Every hook in lifecycle order under its banner, then the ``register`` callback types."""
    from agentdeck import ports
    from agentdeck.plugins import hookspecs

    port_names = set(ports.__all__)
    callbacks = [  # in source order
        name
        for name, value in vars(hookspecs).items()
        if name.startswith("Register") and isinstance(value, type)
    ]

    def link(role: str, target: str) -> str | None:
        last = target.rsplit(".", 1)[-1]
        if last in port_names:
            return f"ports.md#{_anchor(last)}"
        if last in callbacks or last.startswith("agentdeck_register_"):
            return f"#{_anchor(last)}"
        if last == "SettingsSection":
            return "settings.md"
        return None

    groups = hook_groups(hookspecs)
    listed = [hook for _, _, hooks in groups for hook in hooks]
    if sorted(listed) != hook_names(hookspecs):
        raise GenerationError(
            f"hooks outside a banner group: {sorted(set(hook_names(hookspecs)) - set(listed))}"
        )
    lines = ["## Every hook", ""]
    lines += _table(
        ["hook", "group", "what it registers"],
        (
            [
                f"[`{hook}`](#{_anchor(hook)})",
                _capitalized(title),
                _port_link(_registered_port(hookspecs, hook)),
            ]
            for title, _, hooks in groups
            for hook in hooks
        ),
    )
    for title, intro, hooks in groups:
        lines += ["", f"## {_capitalized(title)}", "", intro]
        for hook in hooks:
            lines += _hook_section(hookspecs, hook, link)
    lines += ["", "## The `register` callbacks {#register-callbacks}", ""]
    lines += [
        "The types of the `register` argument, from `agentdeck.plugins.hookspecs`: annotate a "
        "hook implementation with the one its spec names, and a type checker holds each "
        "registration to its port. The host checks the same at runtime.",
    ]
    for name in callbacks:
        protocol = getattr(hookspecs, name)
        call = _signature_of(protocol.__call__)
        variables = [variable.__name__ for variable in getattr(protocol, "__parameters__", ())]
        for variable in variables:
            call = re.sub(rf"\b{variable}\b", "Port", call)
        shown = f"{name}[Port]" if variables else name
        lines += ["", f"### `{shown}` {{#{_anchor(name)}}}", ""]
        lines += [markdown(protocol.__doc__ or "", link), ""]
        lines += [f"`register{call}`"]
        if variables:
            lines += ["", "`Port` is the type argument: the port each factory must return."]
    return "\n".join(lines)


def _hook_section(hookspecs: ModuleType, hook: str, link: Linker) -> list[str]:
    function = getattr(hookspecs, hook)
    hint = typing.get_type_hints(function)["register"]
    callback = typing.get_origin(hint) or hint
    port = _registered_port(hookspecs, hook)
    call = _signature_of(callback.__call__)
    for variable in getattr(callback, "__parameters__", ()):
        call = re.sub(rf"\b{variable.__name__}\b", port.__name__, call)
    example = example_path(hook)
    if not example.is_file():
        raise GenerationError(
            f"hook {hook} has no example: write {_shown(example)} (a runnable "
            "script that registers through the hook and uses what it registered)"
        )
    lines = ["", f"### `{hook}` {{#{_anchor(hook)}}}", ""]
    lines += [f"`{hook}{_signature_of(function)}`", ""]
    lines += [markdown(function.__doc__ or "", link), ""]
    lines += [
        f"- **`register`**: [`{_type_text(hint)}`](#{_anchor(callback.__name__)}), "
        f"called as `register{call}`",
        f"- **registers**: {_port_link(port)}",
    ]
    lines += ["", f"Example (`{_shown(example)}`):", ""]
    lines += ["```python", example.read_text(encoding="utf-8").strip(), "```"]
    return lines


def _shown(path: Path) -> str:
    """A path as the repository names it."""
    return (
        path.relative_to(DOCS.parent).as_posix() if path.is_relative_to(DOCS.parent) else str(path)
    )


def _registered_port(hookspecs: ModuleType, hook: str) -> type:
    """The port (or base class) what a hook registers must be, read from its ``register`` type:
    the type argument of ``RegisterScheme[EventStore]``, or the ``type[X]`` a callback takes."""
    hint = typing.get_type_hints(getattr(hookspecs, hook))["register"]
    arguments = typing.get_args(hint)
    if arguments:
        return typing.cast(type, arguments[0])
    hints = typing.get_type_hints(hint.__call__, vars(hookspecs))
    for name, parameter in hints.items():
        if name == "return":
            continue
        union = typing.get_origin(parameter) in (typing.Union, types.UnionType)
        for arm in typing.get_args(parameter) if union else (parameter,):
            if typing.get_origin(arm) is type:
                return typing.cast(type, typing.get_args(arm)[0])
    raise GenerationError(f"cannot tell what {hook} registers from {hint!r}")


def _capitalized(title: str) -> str:
    return title[:1].upper() + title[1:]


def _port_link(port: type) -> str:
    from agentdeck import ports

    if port.__name__ in ports.__all__:
        return f"[`{port.__name__}`](ports.md#{_anchor(port.__name__)})"
    if port.__name__ == "SettingsSection":
        return "a [`SettingsSection`](settings.md) subclass"
    return f"`{port.__name__}`"


def _type_text(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is None:
        return str(getattr(hint, "__name__", hint))
    arguments = ", ".join(_type_text(argument) for argument in typing.get_args(hint))
    return f"{origin.__name__}[{arguments}]"


# =========================================================================== ports


def ports_markdown() -> str:
    """Every exported port, family by family: docstring, fields or attributes, methods."""
    from agentdeck import ports

    exported = list(ports.__all__)
    modules = [(_module(f"agentdeck.ports.{name}"), title) for name, title in FAMILIES]
    placed = [name for module, _ in modules for name in module.__all__]
    stray = sorted(set(exported) - set(placed))
    if stray:
        raise GenerationError(
            f"agentdeck.ports exports {stray}, defined in no module of FAMILIES "
            "(docs/gen_contract.py): add the module there"
        )
    anchors = _port_anchors(modules)

    def link(role: str, target: str) -> str | None:
        parts = target.split(".")
        last = parts[-1]
        if role == "meth" and len(parts) >= 2 and _anchor(parts[-2], last) in anchors:
            return f"#{_anchor(parts[-2], last)}"
        if last in exported:
            return f"#{_anchor(last)}"
        if len(parts) >= 2 and parts[-2] in exported:
            return f"#{_anchor(parts[-2])}"
        return None

    lines = ["## Every port", ""]
    lines += _table(
        ["name", "family", "what it is"],
        (
            [f"[`{name}`](#{_anchor(name)})", title, _first_sentence(_doc_of(module, name))]
            for module, title in modules
            for name in _in_source_order(module)
        ),
    )
    for module, title in modules:
        lines += ["", f"## {title} {{#{_anchor(module.__name__.rsplit('.', 1)[-1])}}}", ""]
        lines += [markdown(module.__doc__ or "", link)]
        for name in _in_source_order(module):
            lines += _port_section(module, name, _within(name, link, anchors), set(exported))
    return "\n".join(lines)


def _within(class_name: str, link: Linker, anchors: set[str]) -> Linker:
    """``link``, also resolving a bare ``:meth:`name``` to a method of ``class_name``."""

    def resolve(role: str, target: str) -> str | None:
        if role in ("meth", "attr") and "." not in target:
            if _anchor(class_name, target) in anchors:
                return f"#{_anchor(class_name, target)}"
            return f"#{_anchor(class_name)}"
        return link(role, target)

    return resolve


def _module(name: str) -> ModuleType:
    import importlib

    return importlib.import_module(name)


def _port_anchors(modules: Iterable[tuple[ModuleType, str]]) -> set[str]:
    anchors = set()
    for module, _ in modules:
        for name in module.__all__:
            anchors.add(_anchor(name))
            node = _class_node(module, name)
            if node is not None:
                anchors |= {_anchor(name, method.name) for method in _methods(node)}
    return anchors


def _in_source_order(module: ModuleType) -> list[str]:
    tree = _tree(module)
    order: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            order.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            order += [t.id for t in targets if isinstance(t, ast.Name)]
    return [name for name in order if name in module.__all__]


def _port_section(module: ModuleType, name: str, link: Linker, exported: set[str]) -> list[str]:
    value = getattr(module, name)
    lines = ["", f"### `{name}` {{#{_anchor(name)}}}", ""]
    node = _class_node(module, name)
    if node is None:  # a type alias
        alias = _alias_node(module, name)
        lines += [f"*type alias* · `{name} = {ast.unparse(alias.value)}`", ""]
        lines += [markdown(_doc_of(module, name), link)]
        return lines
    bases = [base.__name__ for base in value.__bases__ if base.__name__ in exported]
    lines += [
        f"*{_kind(value)}*"
        + (
            " · " + ", ".join(f"subclass of [`{b}`](#{_anchor(b)})" for b in bases) if bases else ""
        ),
        "",
    ]
    lines += [markdown(value.__doc__ or "", link)]
    attributes = list(_attributes(node, module))
    if attributes:
        heading = (
            "Members"
            if issubclass(value, enum.Enum)
            else ("Fields" if dataclasses.is_dataclass(value) else "Attributes")
        )
        lines += ["", f"{heading}:", ""]
        lines += _table(
            ["name", "type", "default", "description"],
            (
                [f"`{n}`", f"`{t}`" if t else "", f"`{d}`" if d else "", markdown(doc, link)]
                for n, t, d, doc in attributes
            ),
        )
    for method in _methods(node):
        lines += _method_section(value, name, method, link)
    return lines


def _kind(value: type) -> str:
    if issubclass(value, enum.Enum):
        return "enum"
    if dataclasses.is_dataclass(value):
        params = getattr(value, "__dataclass_params__", None)
        return "frozen dataclass" if params is not None and params.frozen else "dataclass"
    if inspect.isabstract(value):
        return "abstract class"
    return "class"


def _attributes(node: ast.ClassDef, module: ModuleType) -> Iterable[tuple[str, str, str, str]]:
    """``(name, type, default, docstring)`` per public attribute of a class body, in order."""
    body = node.body
    for index, statement in enumerate(body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            name, annotation, value = (
                statement.target.id,
                ast.unparse(statement.annotation),
                statement.value,
            )
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name, annotation, value = statement.targets[0].id, "", statement.value
        else:
            continue
        if name.startswith("_") or name == "model_config":
            continue
        follows = body[index + 1] if index + 1 < len(body) else None
        doc = (
            follows.value.value
            if isinstance(follows, ast.Expr)
            and isinstance(follows.value, ast.Constant)
            and isinstance(follows.value.value, str)
            else ""
        )
        yield name, annotation, _default_text(value), doc


def _default_text(value: ast.expr | None) -> str:
    if value is None:
        return ""
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "field":
        for keyword in value.keywords:
            if keyword.arg == "default_factory":
                return f"{ast.unparse(keyword.value)}()"
            if keyword.arg == "default":
                return ast.unparse(keyword.value)
        return ""
    return ast.unparse(value)


def _methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        statement
        for statement in node.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and (not statement.name.startswith("_") or statement.name == "__init__")
        and not (statement.name == "__init__" and ast.get_docstring(statement) is None)
    ]


def _method_section(
    cls: type, class_name: str, node: ast.FunctionDef | ast.AsyncFunctionDef, link: Linker
) -> list[str]:
    raw = inspect.getattr_static(cls, node.name)
    decorators = {ast.unparse(d) for d in node.decorator_list}
    doc = ast.get_docstring(node)
    if not doc:
        raise GenerationError(
            f"{class_name}.{node.name} has no docstring: a port's docstrings are its contract"
        )
    words = []
    if "property" in decorators:
        words.append("property")
    if isinstance(raw, classmethod):
        words.append("classmethod")
    if getattr(getattr(raw, "__func__", raw), "__isabstractmethod__", False):
        words.append("abstract")
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    if "property" in decorators:
        signature = f"{node.name}: {ast.unparse(node.returns)}" if node.returns else node.name
    else:
        signature = f"{prefix}{node.name}{_signature_from_ast(node)}"
    lines = ["", f"#### `{node.name}` {{#{_anchor(class_name, node.name)}}}", ""]
    lines += [f"`{signature}`" + (" · " + ", ".join(words) if words else ""), ""]
    lines += [markdown(doc, link)]
    return lines


# =========================================================================== signatures


def _signature_from_ast(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``(params) -> return`` as the source spells it, without ``self``/``cls``."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    parts: list[str] = []
    for index, (argument, default) in enumerate(zip(positional, defaults, strict=True)):
        if index == 0 and argument.arg in ("self", "cls"):
            continue
        parts.append(_parameter(argument, default))
        if arguments.posonlyargs and index == len(arguments.posonlyargs) - 1:
            parts.append("/")
    if arguments.vararg is not None:
        parts.append("*" + _parameter(arguments.vararg, None))
    elif arguments.kwonlyargs:
        parts.append("*")
    for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        parts.append(_parameter(argument, kw_default))
    if arguments.kwarg is not None:
        parts.append("**" + _parameter(arguments.kwarg, None))
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"({', '.join(parts)}){returns}"


def _parameter(argument: ast.arg, default: ast.expr | None) -> str:
    text = argument.arg
    if argument.annotation is not None:
        text += f": {ast.unparse(argument.annotation)}"
        return text + (f" = {ast.unparse(default)}" if default is not None else "")
    return text + (f"={ast.unparse(default)}" if default is not None else "")


def _signature_of(function: Callable[..., Any]) -> str:
    """A function's signature from its source (a hook spec or a protocol's ``__call__``)."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return _signature_from_ast(node)


# =========================================================================== source


_TREES: dict[str, ast.Module] = {}


def _tree(module: ModuleType) -> ast.Module:
    if module.__name__ not in _TREES:
        _TREES[module.__name__] = ast.parse(inspect.getsource(module))
    return _TREES[module.__name__]


def _class_node(module: ModuleType, name: str) -> ast.ClassDef | None:
    for node in _tree(module).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _alias_node(module: ModuleType, name: str) -> ast.Assign:
    for node in _tree(module).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node
    raise GenerationError(f"{module.__name__}.{name} is neither a class nor an alias")


def _doc_of(module: ModuleType, name: str) -> str:
    """A class's docstring, or the string literal under a module-level assignment."""
    node = _class_node(module, name)
    if node is not None:
        return ast.get_docstring(node) or ""
    body = _tree(module).body
    alias = _alias_node(module, name)
    follows = body[body.index(alias) + 1]
    if (
        isinstance(follows, ast.Expr)
        and isinstance(follows.value, ast.Constant)
        and isinstance(follows.value.value, str)
    ):
        return inspect.cleandoc(follows.value.value)
    raise GenerationError(f"{module.__name__}.{name} has no docstring")


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.:])\s", paragraph, maxsplit=1)[0]
    return _inline(sentence.rstrip(":."), lambda role, target: None)


# =========================================================================== tables


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def _cell(text: str) -> str:
    pieces = " ".join(text.split()).split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(pieces))


__all__ = [
    "FAMILIES",
    "GenerationError",
    "Linker",
    "example_path",
    "hook_groups",
    "hook_names",
    "hooks_markdown",
    "markdown",
    "ports_markdown",
]
