"""The sampling settings of a legacy `step()` loop: what its `trainer.generate(...)` calls passed
to `model.generate`, read with `ast`, and what the rewritten TRL 1.13 config generates with.

Legacy PPO (TRL <= 0.11) handed `generate`'s keywords straight to the model's `generate`, so a
setting the loop left out came from the model's generation config (transformers' defaults:
greedy decoding, top_k=50, temperature and top_p 1.0, max_length=20 with the prompt included;
a model's generation_config.json may say otherwise). TRL 1.13 builds its own GenerationConfig
from the trainer config's fields and ignores the model's. Both sides are put in the same terms
here, so that the checker can tell which sampling setting a rewrite changed.
"""

from __future__ import annotations

import ast
from typing import Any

from migrate.effective.values import UNKNOWN

# What a loop that did not pass a setting got: whatever the model's generation config said.
MODEL_CONFIG = "the model's generation config"
TRAINERS = {"PPOTrainer"}
# Keywords with a config field of their own in TRL 1.13 (and TRL 1.13's value when unset)
FIELDS = {
    "temperature": ("temperature", 1.0),
    "top_k": ("top_k", 0),
    "top_p": ("top_p", 1.0),
    "min_p": ("min_p", None),
    "repetition_penalty": ("repetition_penalty", 1.0),
}
# Keywords that shape how the old call generated but are not sampling settings: the trainer's
# plumbing (prompt returned, batching, reference responses) and the tokens TRL pads and stops with
NOT_SAMPLING = {
    "return_prompt",
    "batch_size",
    "generate_ref_response",
    "remove_padding",
    "pad_token_id",
    "eos_token_id",
    "bos_token_id",
}
SETTINGS = (
    "sampling",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repetition_penalty",
    "min_length",
    "max_completion_length",
    "other_generation",
)


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


def _dicts(tree: ast.Module) -> dict[str, dict[str, Any] | None]:
    """Names bound to a dict literal or `dict(k=v)` (None when bound more than once, or to
    anything else as well), with the keys later `name["k"] = v` statements set."""
    out: dict[str, dict[str, Any] | None] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            literal: dict[str, Any] | None = None
            if isinstance(value, ast.Dict) and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
            ):
                literal = {
                    k.value: _literal(v)  # type: ignore[union-attr]
                    for k, v in zip(value.keys, value.values)
                }
            elif (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "dict"
                and not value.args
                and all(k.arg for k in value.keywords)
            ):
                literal = {str(k.arg): _literal(k.value) for k in value.keywords}
            out[target.id] = None if target.id in out else literal
    for node in ast.walk(tree):  # `gen_kwargs["max_new_tokens"] = n`
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
            and out.get(target.value.id) is not None
        ):
            out[target.value.id][target.slice.value] = _literal(node.value)  # type: ignore[index]
    return out


def trainer_names(tree: ast.Module) -> set[str]:
    """Names bound to a PPO trainer (`ppo_trainer = PPOTrainer(...)`)."""
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _callee(node.value) in TRAINERS
        ):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def generate_calls(tree: ast.Module, trainers: set[str]) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "generate"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in trainers
    ]


def _keywords(call: ast.Call, dicts: dict[str, dict[str, Any] | None]) -> dict[str, Any] | None:
    """The keywords a generate call passed, `**name` of a dict literal merged in; None when one
    is not known (a dict built elsewhere)."""
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is not None:
            out[kw.arg] = _literal(kw.value)
            if kw.arg == "length_sampler":
                out[kw.arg] = _sampler(kw.value)
            continue
        found = dicts.get(kw.value.id) if isinstance(kw.value, ast.Name) else None
        if found is None:
            return None
        out.update(found)
    return out


def _sampler(node: ast.expr) -> Any:
    """`LengthSampler(lo, hi)` drew a length in range(lo, hi) for every sample."""
    if isinstance(node, ast.Call) and _callee(node) == "LengthSampler" and len(node.args) == 2:
        lo, hi = (_literal(a) for a in node.args)
        return f"a random length in range({lo}, {hi})"
    return "a random length (LengthSampler)"


def _samplers(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _callee(node.value) == "LengthSampler"
        ):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = _sampler(node.value)
    return out


def old_generation(text: str) -> dict[str, Any] | None:
    """The old loop's sampling settings, or None when the file has no `trainer.generate(...)`
    of a PPO trainer. A setting the calls disagree on, or pass as a run-time value, is UNKNOWN."""
    tree = ast.parse(text)
    calls = generate_calls(tree, trainer_names(tree))
    if not calls:
        return None
    dicts, samplers = _dicts(tree), _samplers(tree)
    per_call = []
    for call in calls:
        given = _keywords(call, dicts)
        if given is None:
            return {s: UNKNOWN for s in SETTINGS}
        sampler = next((kw.value for kw in call.keywords if kw.arg == "length_sampler"), None)
        if isinstance(sampler, ast.Name) and sampler.id in samplers:
            given["length_sampler"] = samplers[sampler.id]
        per_call.append(_settings(given))
    return {s: _agreed([c[s] for c in per_call]) for s in SETTINGS}


def _agreed(values: list[Any]) -> Any:
    first = values[0]
    return first if all(v == first for v in values) else UNKNOWN


def _settings(given: dict[str, Any]) -> dict[str, Any]:
    do_sample = given.get("do_sample", MODEL_CONFIG)
    out: dict[str, Any] = {
        "sampling": do_sample
        if do_sample in (MODEL_CONFIG, UNKNOWN)
        else ("sample" if do_sample else "greedy"),
        "min_length": _min_length(given.get("min_length", -1)),
    }
    for key, (_, unset) in FIELDS.items():
        # temperature, top_k and top_p came from the model's config when not passed; min_p and
        # repetition_penalty default to off in transformers and are rarely set by a model
        default = MODEL_CONFIG if key in ("temperature", "top_k", "top_p") else unset
        value = given.get(key, default)
        out[key] = _number(value)
    if "max_new_tokens" in given:
        out["max_completion_length"] = given["max_new_tokens"]
    elif "length_sampler" in given:
        out["max_completion_length"] = given["length_sampler"]
    else:
        out["max_completion_length"] = MODEL_CONFIG
    out["other_generation"] = _other(
        {
            k: v
            for k, v in given.items()
            if k not in FIELDS
            and k not in NOT_SAMPLING
            and k not in ("do_sample", "min_length", "max_new_tokens", "length_sampler")
        }
    )
    return out


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # top_k=0.0 is top_k=0
    return value


def _min_length(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    return "none" if value in (None, -1, 0) else value


def _other(extra: dict[str, Any]) -> Any:
    if any(v is UNKNOWN for v in extra.values()):
        return UNKNOWN
    # a string, not a tuple: the checker reads a tuple as the values an era's releases had
    return ", ".join(f"{k}={v!r}" for k, v in sorted(extra.items())) or "none"


def new_generation(fields: dict[str, Any]) -> dict[str, Any]:
    """The rewritten config's sampling settings, in the terms of `old_generation`."""
    kwargs = fields.get("generation_kwargs")
    if kwargs is UNKNOWN:
        return {s: UNKNOWN for s in SETTINGS}
    extra = dict(kwargs or {})
    out: dict[str, Any] = {}
    for key, (field, _) in FIELDS.items():
        value = extra.pop(key, fields.get(field))
        out[key] = _number(value)
    do_sample = extra.pop("do_sample", True)
    out["sampling"] = "sample" if do_sample else "greedy"
    out["min_length"] = _min_length(extra.pop("min_length", None))
    out["max_completion_length"] = extra.pop("max_new_tokens", fields.get("max_completion_length"))
    for key in NOT_SAMPLING:
        extra.pop(key, None)
    out["other_generation"] = _other(extra)
    return out


def still_generates(text: str, trainers: set[str]) -> bool:
    """Whether the rewritten text still calls `generate` on one of the old trainer names: the
    loop was left for a human (its TODO says why), and its settings were not moved."""
    return bool(generate_calls(ast.parse(text), trainers))
