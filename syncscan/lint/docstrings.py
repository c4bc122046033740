"""The parameter types a function's docstring declares, as Jedi and Sphinx read them: Google style
(`x (Tensor): ...`, ``x (`torch.Tensor`, *optional*): ...``, `t0: scalar float64 Tensor giving ...`),
numpy style (`x : torch.Tensor`) and Sphinx fields (`:type x: torch.Tensor`, `:param torch.Tensor x:`).

Only "a tensor" is read, and only where the declared type is a tensor and nothing else: `Tensor or
float`, `list of Tensors`, `Union[Tensor, int]` and `array_like` say nothing.
"""

from __future__ import annotations

import re

# a type spelled as one tensor: `Tensor`, `torch.Tensor`, `torch.FloatTensor`, `th.LongTensor`
_TENSOR_TYPE = re.compile(r"(?:(?:torch|th|pt)\.)?(?:Float|Long|Bool|Byte|Double|Half|Int|BFloat16)?Tensor")
# words that may come before the type in a free-text Google entry (`t0: scalar float64 Tensor giving ...`)
_MODIFIER = (r"(?:a|an|the|one|single|scalar|optional|0-d|0-dim|\d-?[dD]|\d-?dim(?:ensional)?|batched|"
             r"float(?:16|32|64)?|double|half|bfloat16|int(?:8|16|32|64)?|long|bool(?:ean)?|real|complex|"
             r"cuda|gpu|torch|pytorch|input|output)")
_FREE_TEXT = re.compile(rf"(?:{_MODIFIER}[\s,]+)*`?(?:{_TENSOR_TYPE.pattern}|tensor)`?(?![\w\[]| or\b|/)")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters)\s*:?\s*$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE = re.compile(r"^(\s*)\*{0,2}(\w+)\s*(?:\((.*?)\))?\s*:(?!:)\s*(.*)$")
_NUMPY = re.compile(r"^(\s*)(\w+)\s*:\s+(.+?)\s*$")  # `x : Tensor`, and `x: Tensor` under a dashed heading
_SPHINX_TYPE = re.compile(r":type\s+(\w+)\s*:\s*(.+?)\s*$")
_SPHINX_PARAM = re.compile(r":param\s+(.+?)\s+(\w+)\s*:")


def _is_tensor_type(text: str) -> bool:
    """`Tensor`, ``torch.Tensor``, `Tensor, optional`, `torch.FloatTensor of shape (B, N)`,
    `torch.Tensor(shape=(n, k))`: one tensor."""
    t = text.replace("`", "").replace("*", "").replace("~", "").strip()
    t = re.split(r",|\(|\s+of\s+(?:shape|size)\b|\s+with\s+shape\b", t, maxsplit=1)[0].strip()
    return _TENSOR_TYPE.fullmatch(t) is not None


def tensor_params(doc: str | None, params: set[str] | frozenset[str]) -> frozenset[str]:
    """The names among `params` that the docstring `doc` declares to be tensors."""
    if not doc or "ensor" not in doc:
        return frozenset()
    out: set[str] = set()
    lines = doc.expandtabs().splitlines()
    section_indent: int | None = None  # inside a Google "Args:" section: the indent of its entries
    numpy_section = False
    entry_indent: int | None = None
    for i, line in enumerate(lines):
        for m in _SPHINX_TYPE.finditer(line):
            if m.group(1) in params and _is_tensor_type(m.group(2)):
                out.add(m.group(1))
        for m in _SPHINX_PARAM.finditer(line):
            if m.group(2) in params and _is_tensor_type(m.group(1)):
                out.add(m.group(2))
        if _SECTION.match(line):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            numpy_section = bool(_UNDERLINE.match(nxt))
            section_indent, entry_indent = len(line) - len(line.lstrip()), None
            continue
        if section_indent is None or _UNDERLINE.match(line) or not line.strip():
            continue
        if numpy_section and i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]):
            section_indent = None  # the next numpy section (`Returns`)
            continue
        indent = len(line) - len(line.lstrip())
        if indent < section_indent or indent == section_indent and not numpy_section:
            section_indent = None  # the section ended (the next heading, or prose)
            continue
        if entry_indent is None:
            entry_indent = indent
        if indent != entry_indent:
            continue  # a continuation line of an entry's description
        if numpy_section:
            m = _NUMPY.match(line)
            if m and m.group(2) in params and _is_tensor_type(m.group(3)):
                out.add(m.group(2))
            continue
        m = _GOOGLE.match(line)
        if m is None or m.group(2) not in params:
            continue
        typed, desc = m.group(3), m.group(4)
        if typed is not None:
            if _is_tensor_type(typed):
                out.add(m.group(2))
        elif _FREE_TEXT.match(desc.strip()):
            out.add(m.group(2))
    return frozenset(out)


_RETURNS = re.compile(r"^\s*(Returns|Return)\s*:?\s*$")
_RETURN_TYPE = re.compile(r"^\s*(?:\w+\s+:\s+)?(.+?)\s*(?::\s.*|:)?$")  # `Tensor: the x`, `x : Tensor`, `Tensor`


def returns_tensor(doc: str | None) -> bool:
    """The docstring's Returns section declares one tensor: Google (`Returns:` then `Tensor: the x` or
    `torch.Tensor of shape (B, N)`) or numpy (`Returns` over dashes, then `torch.Tensor(shape=(n,))` or
    `x : Tensor`). A section of several entries (a tuple), or prose, says nothing."""
    if not doc or "ensor" not in doc:
        return False
    lines = doc.expandtabs().splitlines()
    for i, line in enumerate(lines):
        if not _RETURNS.match(line):
            continue
        head = len(line) - len(line.lstrip())
        j = i + 1
        if j < len(lines) and _UNDERLINE.match(lines[j]):
            j += 1
        entries = []
        entry_indent = None
        for text in lines[j:]:
            if not text.strip():
                continue
            indent = len(text) - len(text.lstrip())
            if indent < head or _UNDERLINE.match(text) or indent == head and entries and _is_heading(text):
                break
            if entry_indent is None:
                entry_indent = indent
            if indent == entry_indent:
                entries.append(text.strip())
            elif indent < entry_indent:
                break
        if len(entries) != 1:
            return False
        m = _RETURN_TYPE.match(entries[0])
        return m is not None and _is_tensor_type(m.group(1))
    return False


def _is_heading(text: str) -> bool:
    """`Raises:`, `Examples`, `Note:`: the next section."""
    return re.fullmatch(r"\s*[A-Z][A-Za-z ]*:?\s*", text) is not None
