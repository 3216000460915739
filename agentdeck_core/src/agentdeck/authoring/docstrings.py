"""What a docstring tells a model: the summary, and one description per parameter.

A tool's description and its parameters' descriptions are read from the function's docstring in
any of the three styles Python projects write (the styles the OpenAI Agents SDK reads too, so a
function offered raw through the SDK and through a deck tells the model the same thing)::

    Google                     NumPy                        Sphinx

    Args:                      Parameters                   :param amount: How many.
        amount: How many.      ----------                   :param str currency: Which one.
        currency (str): Which  amount : float
            one.                   How many.
                               currency : str, optional
                                   Which one.

A description that runs over several lines keeps its line breaks. This parser is the core's own
rather than a docstring library's: the core stays free of dependencies that only this needs, and
the schema a tool declares never depends on which packages happen to be installed.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["first_paragraph", "parameter_docs"]

_GOOGLE_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns|Return|Yields|Raises|Examples?|Notes?|Attributes|See Also|Warnings?|References)"
    r"\s*:\s*$",
    re.IGNORECASE,
)
_GOOGLE_ARGS = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$",
    re.IGNORECASE,
)
_GOOGLE_ARG = re.compile(r"^(\s+)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_PARAMETERS = frozenset({"parameters", "other parameters", "keyword arguments"})
_NUMPY_ARG = re.compile(r"^(\s*)\*{0,2}(\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_SPHINX_FIELD = re.compile(r"^\s*:(\w+)(?:\s+[^:]*)?:")
_SPHINX_PARAM = re.compile(r"^(\s*):param\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$")


def first_paragraph(docstring: str) -> str:
    """The docstring's summary: its first paragraph, joined into one line.

    It ends at the first blank line or section header (``Args:``, a NumPy header underlined with
    dashes, a Sphinx ``:param`` field), whichever comes first.
    """
    lines = inspect.cleandoc(docstring).splitlines()
    paragraph: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            if paragraph:
                break
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if (
            _GOOGLE_SECTION.match(line)
            or _SPHINX_FIELD.match(line)
            or _NUMPY_UNDERLINE.match(line)
            or _NUMPY_UNDERLINE.match(following)
        ):
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


def parameter_docs(docstring: str) -> dict[str, str]:
    """Parameter name -> description, from every parameter section the docstring has.

    ``*args``/``**kwargs`` are keyed without their stars. A NumPy line naming several
    parameters (``x, y : int``) gives each the same description. A parameter described twice
    keeps its first description.
    """
    lines = inspect.cleandoc(docstring).splitlines()
    docs: dict[str, str] = {}
    for name, text in (*_google(lines), *_numpy(lines), *_sphinx(lines)):
        docs.setdefault(name, text)
    return docs


def _joined(parts: list[str]) -> str:
    return "\n".join(part for part in parts if part).strip()


def _google(lines: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, list[str]]] = []
    in_args = False
    section_indent = 0
    arg_indent: int | None = None
    for line in lines:
        header = _GOOGLE_ARGS.match(line)
        if header:
            in_args, section_indent, arg_indent = True, len(header[1]), None
            continue
        if not in_args:
            continue
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= section_indent:
            in_args = False  # the next section (or the text after the section) began
            continue
        entry = _GOOGLE_ARG.match(line)
        if entry and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            found.append((entry[2], [entry[3].strip()]))
        elif found:
            found[-1][1].append(line.strip())
    return [(name, _joined(parts)) for name, parts in found]


def _numpy(lines: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[list[str], list[str]]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if not (_NUMPY_UNDERLINE.match(following) and line.strip()):
            index += 1
            continue
        header_indent = len(line) - len(line.lstrip())
        parameters = line.strip().lower() in _NUMPY_PARAMETERS
        index += 2
        # The section runs until the next underlined header.
        while index < len(lines):
            line = lines[index]
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if line.strip() and _NUMPY_UNDERLINE.match(following):
                break
            index += 1
            if not parameters or not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            entry = _NUMPY_ARG.match(line)
            if indent <= header_indent and entry:
                names = [name.strip().lstrip("*") for name in entry[2].split(",")]
                found.append((names, []))
            elif found and indent > header_indent:
                found[-1][1].append(line.strip())
    return [(name, _joined(parts)) for names, parts in found for name in names]


def _sphinx(lines: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, list[str]]] = []
    current = False
    for line in lines:
        entry = _SPHINX_PARAM.match(line)
        if entry:
            found.append((entry[2], [entry[3].strip()]))
            current = True
            continue
        if _SPHINX_FIELD.match(line) or not line.strip():
            current = False  # another field (``:returns:``, ``:type x:``), or a paragraph break
            continue
        if current and line.startswith((" ", "\t")):
            found[-1][1].append(line.strip())
        else:
            current = False
    return [(name, _joined(parts)) for name, parts in found]
