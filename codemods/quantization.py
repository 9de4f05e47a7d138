"""`load_in_8bit=` / `load_in_4bit=` of a model load, which transformers 5 no longer takes, as the
`quantization_config=BitsAndBytesConfig(...)` that does the same (TRL102 for the value-head
models, TRL108 for every other load).

transformers 5 picks bitsandbytes' 4-bit quantizer whenever a BitsAndBytesConfig says
`load_in_8bit=False` (quantizers/auto.py), so a flag that may be False at run time gets the config
only where it is true, and a literal False flag gets none: the model loads unquantized, as it
did."""

from __future__ import annotations

import libcst as cst

from codemods import edits, walk

FLAGS = ("load_in_8bit", "load_in_4bit")
ON, OFF, MAYBE = "on", "off", "maybe"


def bnb_config(flags: list[cst.Arg]) -> tuple[cst.BaseExpression | None, str]:
    """The `quantization_config=` value for the 8/4-bit keyword arguments `flags`, or None when
    every one is a literal False; and whether the model is quantized: ON (a literal True),
    OFF, or MAYBE (a flag read at run time)."""
    values = [edits.literal(a.value) for a in flags]
    if all(v is False for v in values):
        return None, OFF
    live = [a for a, v in zip(flags, values) if v is not False]
    runtime = [a for a, v in zip(flags, values) if v is not True and v is not False]
    inner = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in live]
    inner = [
        a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for a in inner[:-1]
    ] + inner[-1:]
    call: cst.BaseExpression = cst.Call(func=cst.Name("BitsAndBytesConfig"), args=inner)
    if not runtime:
        return call, ON
    test = " or ".join(edits.code(a.value).strip() for a in runtime)
    alone = cst.parse_expression(test) if len(runtime) == 1 else None
    if alone is not None and not isinstance(alone, (cst.IfExp, cst.Lambda, cst.NamedExpr)):
        test_node: cst.BaseExpression = alone
    else:  # `load_in_8bit=True if args.q8 else False` is itself a conditional: parenthesized
        test_node = cst.parse_expression(f"({test})")
    return (
        cst.IfExp(
            test=test_node,
            body=call,
            orelse=cst.Name("None"),
        ),
        MAYBE,
    )


def moved_message(name: str, state: str) -> str:
    """What a finding says of one flag moved into the config."""
    return (
        f"`{name}` is not a from_pretrained argument in transformers 5; moved into "
        "`quantization_config=BitsAndBytesConfig(...)`"
        + (
            ", given only when the flag is true (a BitsAndBytesConfig whose load_in_8bit is "
            "False quantizes in 4 bits)"
            if state == MAYBE
            else ""
        )
    )


def dropped_message(arg: cst.Arg) -> str:
    return (
        f"`{edits.arg_text(arg)}` dropped: transformers 5 has no such argument, "
        "and the model loads unquantized as it did"
    )


def _bnb_state(call: cst.Call) -> str:
    """ON for a `BitsAndBytesConfig(load_in_4bit=True)` (or 8-bit), OFF where both flags are
    literal False or absent, MAYBE where one is read at run time."""
    flags = [edits.literal(a.value) for a in call.args if a.keyword and a.keyword.value in FLAGS]
    if any(v is True for v in flags):
        return ON
    return OFF if all(v is False for v in flags) else MAYBE


def _is_bnb(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and (
        edits.code(expr.func).strip().rpartition(".")[2] == "BitsAndBytesConfig"
    )


def config_names(module: cst.Module) -> dict[str, str]:
    """Each name the module (any scope) assigns a `BitsAndBytesConfig(...)`, with what it
    holds: ON, OFF, or MAYBE (flags read at run time, or other values assigned to it too)."""
    found: dict[str, set[str]] = {}
    for node in walk.find_all(module, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                state = _bnb_state(node.value) if _is_bnb(node.value) else "other"  # type: ignore[arg-type]
                found.setdefault(target.target.value, set()).add(state)
    out = {}
    for name, states in found.items():
        if states - {"other"}:
            out[name] = states.pop() if len(states) == 1 else MAYBE
    return out


def config_state(value: cst.BaseExpression | None, names: dict[str, str]) -> str:
    """Whether a load's `quantization_config=value` quantizes in 8/4 bits: ON, OFF, or MAYBE
    (a config of another kind, or one this file does not build)."""
    if value is None or (isinstance(value, cst.Name) and value.value == "None"):
        return OFF
    if _is_bnb(value):
        return _bnb_state(value)  # type: ignore[arg-type]
    if isinstance(value, cst.Name) and value.value in names:
        return names[value.value]
    return MAYBE


def load_state(call: cst.Call, names: dict[str, str]) -> str:
    """Whether a `from_pretrained(...)` load quantizes in 8/4 bits, by its `load_in_8bit=` /
    `load_in_4bit=` flags and its `quantization_config=`: ON, OFF, or MAYBE (read at run time).
    A `**kwargs` is not read."""
    states = set()
    for arg in call.args:
        key = arg.keyword.value if arg.keyword is not None else None
        if key in FLAGS:
            value = edits.literal(arg.value)
            states.add(ON if value is True else OFF if value in (False, None) else MAYBE)
        elif key == "quantization_config":
            states.add(config_state(arg.value, names))
    return ON if ON in states else MAYBE if MAYBE in states else OFF
