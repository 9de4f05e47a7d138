"""conda environment.yml: conda match specs (`peft=0.10.0`, `torch==2.9.1+cu126`, `python 3.9`)
and the `pip:` section's requirement strings. Parsed with yaml's safe composer, for positions."""

from __future__ import annotations

import re

import yaml
from packaging.utils import canonicalize_name

from compat.model import Declared, SourceRead, Where
from compat.sources import pep508

_SPEC = re.compile(
    r"^(?:(?P<channel>[^:\s]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)(?P<rest>.*)$"
)


def read(src: SourceRead) -> None:
    try:
        root = yaml.compose(src.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        src.error(
            mark.line + 1 if mark else 0,
            f"not valid YAML: {problem}",
            col=mark.column + 1 if mark else 0,
        )
        src.fatal = True
        return
    if root is None:
        return
    if not isinstance(root, yaml.MappingNode):
        src.error(
            root.start_mark.line + 1, "not a conda environment file: the top level is not a mapping"
        )
        src.fatal = True
        return
    for key, value in root.value:
        if key.value == "dependencies" and isinstance(value, yaml.SequenceNode):
            _dependencies(src, value)


def _dependencies(src: SourceRead, seq: yaml.SequenceNode) -> None:
    for item in seq.value:
        if isinstance(item, yaml.ScalarNode):
            _conda_spec(src, item)
        elif isinstance(item, yaml.MappingNode):
            for key, value in item.value:
                if key.value == "pip" and isinstance(value, yaml.SequenceNode):
                    for pip_item in value.value:
                        if isinstance(pip_item, yaml.ScalarNode):
                            _pip_spec(src, pip_item)


def _value_offset(src: SourceRead, node: yaml.ScalarNode) -> int | None:
    """Offset of the scalar's first value character, when its source text is the value itself."""
    start, end = node.start_mark.index, node.end_mark.index
    raw = src.text[start:end]
    if raw == node.value:
        return start
    if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] and raw[1:-1] == node.value:
        return start + 1
    return None


def _conda_spec(src: SourceRead, node: yaml.ScalarNode) -> None:
    text = str(node.value)
    line = node.start_mark.line + 1
    m = _SPEC.match(text.strip())
    if not m:
        src.error(line, f"cannot read conda package spec {text!r}")
        return
    name = m.group("name")
    rest = m.group("rest")
    spec, build = _split_build(rest)
    lead = len(text) - len(text.lstrip())
    spec_start = lead + m.start("rest") + (len(rest) - len(rest.lstrip()))
    spec_text = spec.strip()
    offset = _value_offset(src, node)
    where = None
    note = ""
    if build:
        note = "pinned with a build string"
    elif offset is not None:
        where = Where(offset + spec_start, offset + spec_start + len(spec_text))
        if not spec_text:
            where = Where(offset + lead + m.end("name"), offset + lead + m.end("name"))
    canonical = "python" if name == "python" else canonicalize_name(name)
    src.declared.append(
        Declared(
            name=canonical,
            display=text.strip(),
            specifier=spec_text,
            dialect="conda",
            line=line,
            col=node.start_mark.column + 1,
            where=where,
            note=note,
        )
    )


def _split_build(rest: str) -> tuple[str, str]:
    """(version part, build string) of what follows the name: `=1.2=py310_0`, ` 1.2 py310_0`."""
    stripped = rest.strip()
    if stripped.startswith("=") and not stripped.startswith("=="):
        parts = stripped.split("=")
        if len(parts) >= 3:
            return "=" + parts[1], parts[2]
        return stripped, ""
    pieces = stripped.split()
    if len(pieces) >= 2 and re.match(r"^[\d.*]+$", pieces[0]):
        return rest[: rest.index(pieces[0]) + len(pieces[0])], pieces[1]
    return rest, ""


def _pip_spec(src: SourceRead, node: yaml.ScalarNode) -> None:
    text = str(node.value)
    line = node.start_mark.line + 1
    if text.strip().startswith("-"):
        return  # -r, -e and options inside the pip section
    pep508.declare(
        src,
        text,
        line,
        label="pip section",
        col=node.start_mark.column + 1,
        offset=_value_offset(src, node),
        display=text.strip(),
    )
