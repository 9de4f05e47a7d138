"""A smoke run's outcome: the harness's JSON (or its absence, a timeout, an exit) judged into one
TRL4nn finding at the user's line, with the TODO of ours nearest to an import that failed."""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Sequence
from typing import Any

from migrate.kernel.codes import (
    AT_SCALE,
    CRASH,
    EXIT,
    HARNESS,
    IMPORT,
    NO_STEP,
    NON_FINITE,
    OFFLINE,
    PASSED,
    TIMEOUT,
)
from migrate.kernel.findings import Severity
from migrate.smoke.blame import MISSING_KEY, import_not_ours, not_the_rewrite
from migrate.smoke.result import TODO, SmokeResult, finding, read_text


def judge(
    result: SmokeResult, data: dict[str, Any] | None, *, timed_out: bool, returncode: int | None
) -> None:
    if timed_out:
        result.stack = result.stack or stack_at_kill(result.log_tail, result.ran or result.path)
        finding(
            result,
            TIMEOUT,
            Severity.ERROR,
            f"the script ran past the {result.timeout:g} s timeout and was killed"
            + (f"; it was at {result.stack}" if result.stack else "")
            # a loop the rewrite left for a human (a PPO loop of the script's own) may be
            # what ran on: its TODOs are named
            + _todos_in_file(result.ran or result.path),
        )
        return
    if data is None:
        tail = result.log_tail.strip().splitlines()[-1:] or ["no output"]
        finding(
            result,
            HARNESS,
            Severity.ERROR,
            f"the smoke harness died without a result (exit status {returncode}): {tail[0]}",
        )
        return
    result.trainers = list(data.get("trainers", []))
    result.stand_ins = list(data.get("stand_ins", []))
    result.filled = list(data.get("filled", []))
    result.stand_ins += [
        f"data {p} (missing or empty in the repo)" for p in data.get("missing_data", [])
    ]
    result.stand_ins += [
        f"checkpoint {p} (a placeholder in the repo: no config, tokenizer or weights)"
        for p in data.get("placeholders", [])
    ]
    result.stand_ins += [
        f"data {missing} (missing in the repo: its {sample} read in its place)"
        for missing, sample in data.get("sample_data", [])
    ]
    result.stand_ins += [
        f"adapter {p} (made for the real base model: its config kept, its weights freshly made)"
        for p in data.get("misfit_adapters", [])
    ]
    result.overrides = list(data.get("overrides", []))
    result.at_scale = list(data.get("at_scale", []))
    left_out = tuple(getattr(result.entry, "left_out", ()) or ())
    for flag in left_out:
        name, _, value = flag.partition(" ")
        result.overrides.append(
            {"config": "launch line", "field": name, "was": value or True, "now": "left out"}
        )
    for rel, key, value in result.trimmed:
        result.overrides.append({"config": rel, "field": key, "was": value, "now": "left out"})
    result.error = data.get("error")
    outcome = data.get("outcome")
    err = result.error or {}
    line = int(err.get("line") or 0)
    cause = not_the_rewrite(result, err)  # blame.py: whose stop it is, when not the rewrite's
    not_ours = import_not_ours(result, err) if err.get("kind") == "import" else ""
    todo = (
        ""  # a name the code never binds (or the rewrite dropped), a module this machine or the
        # repository lacks, an argument no one gave: the TODOs are not why it stopped
        if cause or not_ours
        else _todo_near(result.ran or result.path, line)
        or _todo_in_frame(result, err)
        or _todo_naming_key(result, err)
        or _todos_in_file(result.ran or result.path)
    )
    if outcome == "harness":
        finding(
            result,
            HARNESS,
            Severity.ERROR,
            f"the smoke harness could not start: {err.get('exception')}: {err.get('message')}",
        )
    elif outcome == "exit":
        last = [
            ln.strip()
            for ln in result.log_tail.splitlines()
            if ln.strip() and not ln.startswith("[trl-migrate smoke]")
        ]
        shown = " / ".join(last[-3:]) or "no output"
        caught = _CAUGHT_IMPORT.search(result.log_tail)
        said = caught.group(0).replace("\\", "") if caught else ""  # as a repr escapes it
        why = (
            f"; it caught an import error of TRL 1.13 and stopped ({said})"
            f"{_todo_naming(result, said) or todo}"
            if said
            else "; if it parses its own command line, pass the arguments it needs after `--` "
            "or `--from-launcher` the script that runs it (docs/smoke.md)"
        )
        finding(
            result,
            EXIT,
            Severity.ERROR,
            f"the script exited with status {data.get('exit_status')} before training"
            f"{err.get('message') and ' (' + err['message'] + ')' or ''}; its last lines: "
            f"{shown}{why}",
        )
    elif outcome == "error" and err.get("kind") == "import":
        finding(
            result,
            IMPORT,
            Severity.ERROR,
            f"{_after_training(result)}import error on TRL 1.13: {_import_what(err)}{not_ours}"
            f"{todo}",
            line,
        )
    elif outcome == "error" and err.get("kind") == "offline":
        finding(
            result,
            OFFLINE,
            Severity.ERROR,
            f"{_after_training(result)}the script tried to reach the network, which smoke runs "
            f"forbid (offline): {err.get('exception')}: {err.get('message')}{todo}",
            line,
        )
    elif outcome == "error":
        where = "" if line else f" (raised in {err.get('raised_in')})"
        after = _after_training(result)
        finding(
            result,
            CRASH,
            Severity.ERROR,
            f"{after}the script raised {err.get('exception')}: {err.get('message')}"
            f"{_caused_by(err)}{_newer_python(err)}{_older_python(err)}{_dataset_column(err)}"
            f"{_needs_cuda(err)}{cause}{where}"
            f"{_untouched(result, err)}"
            f"{_not_in_repo(err, result.filled)}"
            f"{_from_launch(result, err)}{todo}",
            line,
        )
    if result.findings:
        return
    losses = result.losses
    bad = [x for x in losses if not isinstance(x, (int, float)) or not math.isfinite(x)]
    if result.steps_run == 0:
        todos = sorted(set(TODO.findall(read_text(result.ran or result.path))))
        hint = f"; the rewrite left TODOs ({', '.join(todos)}) in it" if todos else ""
        built = ", ".join(t["class"] for t in result.trainers)
        what = f"built {built} but never trained" if built else "built no Trainer"
        printed = _caught(result)
        finding(
            result,
            NO_STEP,
            Severity.ERROR,
            f"no training step ran: the script {what}{printed}{hint}",
        )
    elif bad:
        finding(
            result,
            NON_FINITE,
            Severity.ERROR,
            f"the loss is not finite: {bad[0]} (losses: {losses})",
        )
    else:
        trainer = ", ".join(
            f"{t['class']} {t['global_step']} steps" for t in result.trainers if t["global_step"]
        )
        shown = ", ".join(f"{x:.4f}" for x in losses) or "not logged"
        finding(
            result,
            PASSED,
            Severity.INFO,
            f"trained: {trainer}, loss {shown} ({result.seconds:.1f} s)" + _with_stand_ins(result),
        )
        for problem in result.at_scale:
            finding(result, AT_SCALE, Severity.WARNING, at_scale_message(problem))
        for flag in left_out:
            finding(result, AT_SCALE, Severity.WARNING, left_out_message(result.entry, flag))
        for rel, key, _ in result.trimmed:
            finding(result, AT_SCALE, Severity.WARNING, trimmed_message(result.entry, rel, key))


def left_out_message(entry: Any, flag: str) -> str:
    """TRL420's words for a flag of the launch line that the rewritten script's config lacks,
    which the smoke run left out (EntryPoint.left_out)."""
    return (
        f"the launch line at {entry.found_in} passes `{flag}`, which the rewritten script's "
        "parser no longer takes (a finding of this report says what replaces it): the smoke "
        "run left it out, the real launch would stop on it"
    )


def trimmed_message(entry: Any, rel: str, key: str) -> str:
    """TRL420's words for a key of the launch line's config file that the rewritten script's
    parser no longer takes, which the smoke run left out of its copy of the file."""
    at = f" (passed by the launch line at {entry.found_in})" if entry is not None else ""
    return (
        f"{rel}{at} sets `{key}`, which the rewritten script's parser no longer takes (a "
        "finding of this report says what replaces it): the smoke run left it out of its copy "
        "of the file, the real launch would stop on it"
    )


# What migrate/reference/caps.py says of a check it ran with the script's precision turned off.
PRECISION_ASIDE = "(its precision aside"


def at_scale_message(problem: str) -> str:
    """TRL420's words for one failure of the script's own settings (caps.AT_SCALE)."""
    where = "on a device with that precision" if PRECISION_ASIDE in problem else "on this machine"
    return (
        f"{problem.rstrip('.')}: the smoke run's caps went past it, the real run {where} "
        "would stop there"
    )


# An import of TRL 1.13 that failed inside a script that caught it and exited on its own
# (stephendongg/rlhf-clinical-redteaming logs the error and exits 1): the TODO says why.
_CAUGHT_IMPORT = re.compile(
    r"cannot import name \\?'\w+\\?' from \\?'trl[\w.]*\\?'|No module named \\?'trl[\w.]*\\?'"
)


def _newer_python(err: dict[str, Any]) -> str:
    """A file the interpreter cannot parse that libcst (whose grammar runs to newer Pythons)
    reads: it is written for a newer Python, such as an f-string reusing its quotes (3.12)."""
    path = err.get("syntax_file")
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError:
        pass
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    else:
        return ""  # it parses here after all (made at run time?): nothing to say
    import libcst

    try:
        libcst.parse_module(text)
    except Exception:  # noqa: BLE001 - not Python at all: the SyntaxError says enough
        return ""
    import sys

    here = ".".join(map(str, sys.version_info[:2]))
    return (
        f"; {os.path.basename(path)} is valid in a newer Python than the {here} that ran it "
        "(libcst parses it): pass `--python` an interpreter of the version the project uses"
    )


_MUTABLE_DEFAULT = re.compile(r"mutable default <class '([\w.]+)'> for field (\w+) is not allowed")


def _older_python(err: dict[str, Any]) -> str:
    """A dataclass field whose default is an unhashable object (a peft `LoraConfig`): Python 3.11
    rejects it where 3.10, which TRL 1.13 still supports, took it. The project's Python, not the
    rewrite."""
    found = _MUTABLE_DEFAULT.search(str(err.get("message", "")))
    if err.get("exception") != "ValueError" or found is None:
        return ""
    return (
        f"; Python 3.11 and later reject a dataclass field whose default is an unhashable object "
        f"(`{found.group(2)}`: a `{found.group(1).rpartition('.')[2]}`), which Python 3.10 took: "
        "the project was written for 3.10, where TRL 1.13 runs too: pass `--python` a 3.10 "
        "interpreter, or give the field a `default_factory`"
    )


def _caused_by(err: dict[str, Any]) -> str:
    """` (from CastError: ...)`: the error the raised one was raised from, when it names one."""
    cause = err.get("cause")
    return f" (from {cause})" if cause else ""


def _untouched(result: SmokeResult, err: dict[str, Any]) -> str:
    """`; it came from utils/rewards.py:12, a file the rewrite did not touch` when the innermost
    project frame is in a file `fix` left alone, and `..., a line the rewrite did not change`
    (or `changed`) when it is in another file `fix` rewrote (known only under `upgrade`)."""
    frames = err.get("project_frames") or []
    if not frames or result.rewritten is None:
        return ""
    file, _, line = frames[-1].rpartition(":")
    if os.path.realpath(file) == os.path.realpath(result.ran or ""):
        return ""  # the script itself (or the script made of a notebook's cells)
    original = result.original(file)
    if original is None:
        return ""
    where = f"; it came from {result.shown(original)}:{line}"
    if original not in result.rewritten:
        return f"{where}, a file the rewrite did not touch"
    old = result.before.get(original)
    if old is None or not line.isdigit() or not original.endswith(".py"):
        return ""
    kept = _kept_line(old.decode("utf-8", "replace"), read_text(file), int(line))
    return f"{where}, a line the rewrite {'did not change' if kept else 'changed'}"


def _kept_line(old: str, new: str, line: int) -> bool:
    """Whether 1-based `line` of `new` is a line of `old` the rewrite left as it was."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return any(tag == "equal" and j1 < line <= j2 for tag, _, _, j1, j2 in matcher.get_opcodes())


def _from_launch(result: SmokeResult, err: dict[str, Any]) -> str:
    """Flags the launch line passes that the script's parser (TRL 1.13's config fields) no
    longer knows: the real launch would stop there too."""
    entry = result.entry
    message = str(err.get("message", ""))
    if (
        entry is None
        or not entry.launch
        or "arguments are not used by the HfArgumentParser" not in (message)
    ):
        return ""
    return (
        f"; they come from the launch line at {entry.found_in}: TRL 1.13's configs no longer "
        "have them, so rename or drop them there"
    )


# What a list operation on datasets 4's lazy `Column` raises: `+` with a list, pandas, json,
# list methods (`col.append`), numpy's `.ndim` probe through pandas.
_COLUMN = re.compile(
    r"'Column' object (has no attribute|is not)|for \S+: 'Column' and|'Column' and '|"
    r"type Column is not JSON|\(not \"Column\"\)"
)


def _dataset_column(err: dict[str, Any]) -> str:
    """A list operation on `dataset["name"]`, which datasets 4 answers with a lazy `Column`
    where datasets 3 gave a list: the datasets release TRL 1.13 installs, not the rewrite."""
    if err.get("exception") not in ("AttributeError", "TypeError") or not _COLUMN.search(
        str(err.get("message", ""))
    ):
        return ""
    return (
        '; `dataset["name"]` is a lazy `Column` from datasets 4.0 on (TRL 1.13 installs datasets '
        ">= 4.7), where datasets 3 gave a list: wrap it in `list(...)` where the code needs a list"
    )


def _needs_cuda(err: dict[str, Any]) -> str:
    """A script that insists on a CUDA device (`assert torch.cuda.is_available()`, `.cuda()`,
    `torch.cuda.set_device`) on a machine without one: neither the rewrite nor TRL 1.13 is at
    fault, and the smoke run cannot pretend a device."""
    message = str(err.get("message", ""))
    if not (
        "Torch not compiled with CUDA enabled" in message
        or "Found no NVIDIA driver" in message
        or (err.get("exception") == "AssertionError" and "cuda" in _raising_line(err).lower())
    ):
        return ""
    return (
        "; the script needs a CUDA device, which this machine lacks (the smoke run cannot "
        "pretend one): smoke-run it where one is, or make the device a choice of the script"
    )


def _raising_line(err: dict[str, Any]) -> str:
    """The source line of the innermost frame of the error's traceback (the `assert` itself,
    where `source` is the script's own line it came through)."""
    lines = str(err.get("traceback", "")).splitlines()
    at = max((i for i, ln in enumerate(lines) if ln.lstrip().startswith("File ")), default=-1)
    if at < 0 or at + 1 >= len(lines):
        return str(err.get("source", ""))
    return lines[at + 1].strip()


def _not_in_repo(err: dict[str, Any], filled: Sequence[str] = ()) -> str:
    """A file the script opens that the repository does not hold (local data, a checkpoint):
    the rewrite is not at fault, and no stand-in can guess its contents. Where the missing
    name is a value the harness gave a required argument (`--config stand-in`, a model name
    for `--reward_model_path`), that is said: the repo gives no value, and the script wants a
    file there."""
    message = str(err.get("message", ""))
    missing = ("No such file", "does not exist", "Can't find", "Unable to find", "not found")
    if err.get("exception") not in ("FileNotFoundError", "OSError", "ValueError") or not any(
        m in message for m in missing
    ):
        return ""
    given: dict[str, str] = {}  # value -> the flag it was given for
    flag = "positional argument"
    for token in filled:
        if token.startswith("-"):
            flag = token
        else:
            given.setdefault(token, flag)
    named = next((v for v in given if v and f"'{v}'" in message), None)
    if named is not None:
        return (
            f"; `{named}` is the stand-in the smoke run gave the required `{given[named]}` (no "
            "launch line of the repository gives it a value), and the script opens it as a "
            f"file: pass the real one (`-- {given[named]} PATH`, or `--from-launcher` a script "
            "that does) to smoke-run past this line"
        )
    return (
        "; that file is not in the repository (local data or a checkpoint of the original "
        "run): supply it, or point the script at one, to smoke-run past this line"
    )


def stack_at_kill(log: str, script: str) -> str:
    """`train.py:42 in main (inside transformers/generation/utils.py:2100)`: the main thread's
    innermost frame in the script, from the faulthandler dump the kill asked for."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", log)
    current = [b for b in blocks if b.lstrip().startswith("Current thread")]
    main = current or [b for b in blocks if b.lstrip().startswith("Thread")]
    if not main:
        return ""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', main[-1])
    if not frames:
        return ""
    target = os.path.realpath(script)
    mine = [f for f in frames if os.path.realpath(f[0]) == target]
    inner = frames[0]
    inner_text = f"{inner[0]}:{inner[1]} in {inner[2]}"
    if not mine:
        return inner_text
    at = f"line {mine[0][1]} of the script (in {mine[0][2]})"
    return at if mine[0] == inner else f"{at}, inside {inner_text}"


def _with_stand_ins(result: SmokeResult) -> str:
    modules = [
        s for s in result.stand_ins if not s.startswith(("data ", "checkpoint ", "adapter "))
    ]
    data = [
        s[len("data ") :].removesuffix(" (missing or empty in the repo)")
        for s in result.stand_ins
        if s.startswith("data ") and "read in its place)" not in s
    ]
    samples = [
        s[len("data ") :]
        .replace(" (missing in the repo: its ", " -> ")
        .removesuffix(" read in its place)")
        for s in result.stand_ins
        if s.startswith("data ") and s.endswith("read in its place)")
    ]
    adapters = [
        s[len("adapter ") :].split(" (")[0] for s in result.stand_ins if s.startswith("adapter ")
    ]
    placeholders = [
        s[len("checkpoint ") :].split(" (")[0]
        for s in result.stand_ins
        if s.startswith("checkpoint ")
    ]
    out = ""
    if modules:
        out += (
            f", with stand-ins for: {', '.join(modules)} (not installed here: install them "
            "to run for real, or pass --no-stand-ins to see the import fail)"
        )
    if data:
        out += (
            f", with stand-in rows for data the repo lacks or leaves empty: {', '.join(data)} "
            "(supply it to train on it)"
        )
    if samples:
        out += (
            f", reading the repo's own sample data in place of the data it lacks: "
            f"{', '.join(samples)} (supply the real data to train on it)"
        )
    if adapters:
        out += (
            f", with freshly made weights for adapters the repo made for the real base model: "
            f"{', '.join(adapters)} (they do not fit the tiny stand-in model)"
        )
    if placeholders:
        out += (
            f", with tiny stand-in models for checkpoint folders the repo leaves as placeholders: "
            f"{', '.join(placeholders)} (put the real checkpoints there to train them)"
        )
    return out


def _import_what(err: dict[str, Any]) -> str:
    """`cannot import LengthSampler from trl.core (No module named 'trl.core')`, from the error and
    the line."""
    name, module = err.get("name") or "", err.get("module") or ""
    reason = re.sub(
        r" \(/[^)]*\)$", "", str(err.get("message") or "")
    )  # drop the file path ImportError appends
    match = re.match(r"\s*from\s+([\w.]+)\s+import\s+\(?([^#]+)", err.get("source") or "")
    if err.get("exception") == "ModuleNotFoundError" and match:
        names = ", ".join(
            f"`{n.split(' as ')[0].strip()}`"
            for n in match.group(2).strip().strip("()").split(",")
            if n.strip() and n.strip() not in ("(", ")", "\\")
        )
        what = f"{names} from `{match.group(1)}`" if names else f"from `{match.group(1)}`"
        return f"cannot import {what}: {reason}"
    if name and module and name != module:
        return f"cannot import `{name}` from `{module}`: {reason}"
    return f"{err.get('exception')}: {reason}"


def _after_training(result: SmokeResult) -> str:
    """`after training 2 steps (loss 0.6931, 0.6931), ` where steps ran before the stop, else ""
    (the training the finding's stop came after is proven)."""
    if not result.steps_run:
        return ""
    shown = ", ".join(f"{x:.4f}" if isinstance(x, float) else str(x) for x in result.losses)
    return f"after training {result.steps_run} steps (loss {shown}), "


def _todo_in_frame(result: SmokeResult, err: dict[str, Any]) -> str:
    """`; the rewrite left a TODO(trl-migrate TRL102) at lib/models.py:7 for a human`: the
    innermost frame of the project, in another of its files, sits under a TODO."""
    frames = err.get("project_frames") or []
    if not frames:
        return ""
    file, _, number = frames[-1].rpartition(":")
    if not number.isdigit() or os.path.realpath(file) == os.path.realpath(result.ran or ""):
        return ""
    near = _todo_near(file, int(number))
    if not near:
        return ""
    original = result.original(file) or file
    return near.replace(" here for a human", f" at {result.shown(original)}:{number} for a human")


def _todo_naming(result: SmokeResult, error: str) -> str:
    """`; the rewrite left a TODO(trl-migrate TRL103) at src/methods/ppo.py:336 for a human`: the
    TODO of a rewritten file over the import the caught error names (`cannot import name
    'PPOConfig' from 'trl'`: the TODO that names `trl.PPOConfig`)."""
    found = re.search(r"name '(\w+)' from '([\w.]+)'|module named '([\w.]+)'", error)
    if found is None:
        return ""
    named = f"`{found.group(2)}.{found.group(1)}`" if found.group(1) else f"`{found.group(3)}"
    for path in sorted(result.rewritten or ()):
        for number, text in enumerate(read_text(path).splitlines(), 1):
            codes = TODO.findall(text)
            if codes and named in text:
                return (
                    f"; the rewrite left a TODO(trl-migrate {', '.join(codes)}) at "
                    f"{result.shown(path)}:{number} for a human"
                )
    return ""


# Errors whose cause a TODO of the rewrite states in its own words: (the error's message, the
# words the TODO says it with, what the finding says the TODO does). TRL 1.13's trainers load a
# policy as a causal LM, so an encoder-decoder checkpoint (T5, BART) stops there, as TRL102's
# TODO over it warns.
_SAID_BY_TODO = (
    (
        re.compile(r"Unrecognized configuration class .* for this kind of AutoModel: AutoModelFor"),
        "encoder-decoder",
        "says TRL 1.13's trainers take no encoder-decoder model",
    ),
    (
        # a torch Dataset of tokenized queries handed on as the trainer's train_dataset
        re.compile(r"`(?:train|eval)_dataset` must be a `Dataset` or `IterableDataset`"),
        'reads a "prompt" column',
        'says RLOO/GRPO read a dataset of "prompt" rows',
    ),
)
_MISSING_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'")
# a file of the training stack (where a trainer's own work raises)
_STACK_FILE = re.compile(r"/(trl|transformers|accelerate|peft|torch)/")


def _in_stack(path: str) -> bool:
    return bool(_STACK_FILE.search(path))


def _todo_naming_key(result: SmokeResult, err: dict[str, Any]) -> str:
    """`; the rewrite left a TODO(trl-migrate TRL105) at line 98 that names "prompt", for a
    human`: the script stopped on a column or key (KeyError: 'prompt') or an attribute
    (`has no attribute 'v_head'`) that a TODO of the script, or of a project file the run went
    through, names: the TODO warned of this stop, though on another line. Where no TODO names
    it, "" (the file's TODOs are listed without a claim)."""
    message = str(err.get("message") or "")
    spelled: tuple[str, ...]  # how a TODO writes the name
    tells = ""  # what the TODO says of the stop, where it names no key or attribute
    if err.get("exception") == "KeyError" and (key := MISSING_KEY.match(message)):
        name = key.group(2)
        spelled = (f'"{name}"', f"`{name}`", f"'{name}'")
    elif err.get("exception") == "AttributeError" and (
        attribute := _MISSING_ATTRIBUTE.search(message)
    ):
        name = attribute.group(1)
        spelled = (f"`{name}`", f".{name}`")
    elif _in_stack(str(err.get("raised_in") or "")) and any(
        t.get("encoder_decoder") for t in result.trainers
    ):
        # DhanushGD/RLHF-PPO: RLOO generating from a T5 policy (no prompt in what it returns)
        spelled = ("encoder-decoder",)
        tells = (
            "says TRL 1.13's trainers take no encoder-decoder model (this trainer was given one)"
        )
    else:
        said = next((entry for entry in _SAID_BY_TODO if entry[0].search(message)), None)
        if said is None:
            return ""
        spelled, tells = (said[1],), said[2]
    ran = result.ran or result.path
    frames = [f.rpartition(":")[0] for f in err.get("project_frames") or []]
    paths = list(dict.fromkeys([ran, *reversed(frames)]))
    for path in paths:
        for number, text in enumerate(read_text(path).splitlines(), 1):
            codes = TODO.findall(text)
            if codes and any(s in text for s in spelled):
                if path.endswith(".smoke.py"):
                    # its cells run as one script: Runnable.locate names the cell
                    shown = f"at script line {number}"
                elif path == ran:
                    shown = f"at line {number}"
                else:
                    shown = f"at {result.shown(result.original(path) or path)}:{number}"
                return (
                    f"; the rewrite left a TODO(trl-migrate {', '.join(codes)}) {shown} that "
                    f"{tells or 'names ' + spelled[0]}, for a human"
                )
    return ""


_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+)')
# a name that reaches the network, as the exception a caught download raised is named
_OFFLINE_NAMES = ("LocalEntryNotFoundError", "OfflineModeIsEnabled", "ConnectionError")


def _caught(result: SmokeResult) -> str:
    """`; it caught OSError: ... (raised at simple_text_rl.py:89) and went on`: the last
    traceback the script printed itself (an `except Exception: traceback.print_exc()` around
    its training, LoganBolton/rl-moondream) where it then trained nothing: that exception is
    why. A caught download is said to be one (smoke runs are offline)."""
    lines = result.log_tail.splitlines()
    starts = [i for i, text in enumerate(lines) if text.startswith("Traceback (most recent")]
    if not starts:
        return ""
    frame, raised = "", ""
    for text in lines[starts[-1] + 1 :]:
        found = _FRAME.match(text)
        if found and result.original(found.group(1)):
            frame = f"{result.shown(result.original(found.group(1)) or '')}:{found.group(2)}"
        elif text and not text[0].isspace():
            raised = text.strip()
            break
    if not raised:
        return ""
    offline = any(name in raised for name in _OFFLINE_NAMES)
    at = f" (raised at {frame})" if frame else ""
    why = ": a download, which smoke runs forbid (offline)" if offline else ""
    return f"; it caught {raised[:300]}{at} and went on{why}"


def _todos_in_file(path: str) -> str:
    """`; the rewrite left TODOs in this file for a human: TRL105 (line 300), TRL104 (line 328)`:
    a failure on a line without one may still be what a TODO elsewhere warned of."""
    cells = path.endswith(".smoke.py")  # a notebook's cells as one script: lines are not theirs
    found = [
        code if cells else f"{code} (line {number})"
        for number, text in enumerate(read_text(path).splitlines(), 1)
        for code in TODO.findall(text)
    ]
    if not found:
        return ""
    shown = ", ".join(found[:4]) + (f", and {len(found) - 4} more" if len(found) > 4 else "")
    return f"; the rewrite left TODOs in this file for a human: {shown}"


def _todo_near(path: str, line: int) -> str:
    """`; the rewrite left a TODO(trl-migrate TRLnnn) on this line` when comments above it carry
    one."""
    if not line:
        return ""
    lines = read_text(path).splitlines()
    codes: list[str] = []
    i = line - 2
    while 0 <= i < len(lines) and lines[i].lstrip().startswith("#"):
        codes += TODO.findall(lines[i])
        i -= 1
    if 0 < line <= len(lines):
        codes += TODO.findall(lines[line - 1])
    if not codes:
        return ""
    return (
        f"; the rewrite left a TODO(trl-migrate {', '.join(sorted(set(codes)))}) here for a human"
    )
