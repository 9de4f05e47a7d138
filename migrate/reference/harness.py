"""The smoke harness: run a user's script unmodified on tiny offline stand-ins, a few steps.

`python -m migrate.reference.harness RESULT.json SCRIPT [ARGS...]` is the subprocess that
`trl-migrate smoke SCRIPT` starts (migrate/smoke/). Before the script runs, `bootstrap`
(with the stand-ins of stand_ins.py and the caps and guards of caps.py):

* maps `from_pretrained` of the Auto model classes, AutoConfig, AutoTokenizer and AutoProcessor
  for any id that is not a local folder to tiny models saved under the run's temporary folder
  (so `model.config._name_or_path` is a real local path: TRL 1.13's GRPO/RLOO reload their
  reference model and reward tokenizers from it);
* replaces `datasets.load_dataset` with small in-memory datasets and `transformers.pipeline`
  for text classification with a tiny deterministic scorer;
* caps every `TrainingArguments` (GRPO/RLOO configs included) in `__post_init__`: `max_steps`,
  small batches and generations, no saving, no trackers, no hub, CPU without a GPU;
* blocks sockets to anything but the loopback, so the network fails fast and is reported.

Then the script runs with `runpy` as `__main__` with its own `sys.argv`; the outcome (trainer
log histories, or the exception and the script's line it came through) goes to RESULT.json.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import runpy
import signal
import sys
import time
import traceback
from typing import Any

# Imported now, and used through these names only: before the user's script runs, our packages
# leave sys.modules (see `_release_our_packages`), so a repo's own `migrate` or `compat`
# module imports as the repo's. None of them imports torch or transformers at module level.
from migrate.reference import absent, arguments, caps, stand_ins

PATHS_ENV = "TRL_MIGRATE_SMOKE_PATHS"  # the project's import roots (migrate.smoke sets them)
MODULE_ENV = "TRL_MIGRATE_SMOKE_MODULE"  # run as `python -m` this module
NOTEBOOK_ENV = "TRL_MIGRATE_SMOKE_NOTEBOOK"  # the script is a notebook's cells


def bootstrap(steps: int) -> None:
    """Block the network now; patch each module of transformers and datasets right after the
    script (or a library) imports it: nothing is imported early, so import order and cycles
    (peft <-> transformers) stay the script's own."""
    caps.patch_network()
    caps.stub_missing_trackers()
    arguments.patch_argparse()
    if hasattr(signal, "SIGUSR1"):  # a timed-out run is asked for its stack before the kill
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    hooks = {
        "transformers.training_args": lambda m: caps.patch_training_args(m, steps),
        "transformers.trainer": lambda m: caps.patch_trainer(m, steps),
        "transformers.utils.hub": caps.patch_hub,
        "huggingface_hub": caps.patch_hub_login,
        "transformers.modeling_utils": stand_ins.patch_models,
        "transformers.generation.configuration_utils": stand_ins.patch_generation_config,
        "transformers.generation.utils": caps.patch_generate,
        "transformers.tokenization_utils_base": stand_ins.patch_tokenizers,
        "transformers.models.auto.modeling_auto": stand_ins.patch_auto_classes,
        "transformers.models.auto.configuration_auto": stand_ins.patch_auto_classes,
        "transformers.models.auto.tokenization_auto": stand_ins.patch_auto_classes,
        "transformers.models.auto.processing_auto": stand_ins.patch_auto_classes,
        "transformers.pipelines": stand_ins.patch_pipeline,
        "datasets": stand_ins.patch_datasets,
        "pandas": stand_ins.patch_pandas,
        "peft.peft_model": stand_ins.patch_peft,
        "peft.config": stand_ins.patch_peft_config,
        "peft.utils": stand_ins.patch_peft_weights,
        "trl.experimental.utils": stand_ins.patch_reference_model,
        "torch": caps.patch_cuda,
        "fire": arguments.patch_fire,
    }
    for name, hook in hooks.items():
        caps.after_import(name, hook)


# -- run and report ---------------------------------------------------------------------------


def _trainer_report(trainer: Any) -> dict[str, Any]:
    history = list(getattr(trainer.state, "log_history", []) or [])
    losses = [float(h["loss"]) for h in history if "loss" in h]
    config = getattr(getattr(trainer, "model", None), "config", None)
    return {
        "class": type(trainer).__name__,
        # a T5 or BART policy: TRL 1.13's online trainers take none (TRL102's TODO says so)
        "encoder_decoder": bool(getattr(config, "is_encoder_decoder", False)),
        "global_step": int(getattr(trainer.state, "global_step", 0) or 0),
        "losses": [x if math.isfinite(x) else str(x) for x in losses],
        "log_history": [
            {k: v for k, v in h.items() if isinstance(v, (int, float, str))} for h in history
        ],
    }


def _is_offline(exc: BaseException) -> bool:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        name = type(e).__name__
        text = str(e)
        if isinstance(e, caps.NetworkBlockedError) or name in (
            "OfflineModeIsEnabled",
            "LocalEntryNotFoundError",
        ):
            return True
        if (
            "offline mode" in text.lower()
            or "HF_HUB_OFFLINE" in text
            or "network access is disabled" in text
        ):
            return True
        e = e.__cause__ or e.__context__
    return False


def _cause(exc: BaseException) -> str:
    """`raise Wrapper(...) from exc`: what `exc` said, on one line. A library that wraps an
    error in a generic one (datasets' "An error occurred while generating the dataset") says
    what went wrong only there; a message over several lines (a schema dump) keeps its first
    and last lines, where such messages put what failed and why."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    text = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"
    return f"{type(exc).__name__}: {text}"[:300]


def describe(exc: BaseException, script: str) -> dict[str, Any]:
    """The exception as a value: its kind, message and the script's own line it came through."""
    frames = traceback.extract_tb(exc.__traceback__)
    target = os.path.realpath(script)
    mine = [f for f in frames if os.path.realpath(f.filename) == target]
    where = mine[-1] if mine else None
    out: dict[str, Any] = {
        "exception": type(exc).__name__,
        "message": str(exc).strip().splitlines()[0][:500] if str(exc).strip() else "",
        "line": where.lineno if where else 0,
        "source": (where.line or "") if where else "",
        "raised_in": f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "",
        "project_frames": [f"{f.filename}:{f.lineno}" for f in frames if _in_project(f.filename)],
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:],
    }
    if exc.__cause__ is not None:
        out["cause"] = _cause(exc.__cause__)
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith("<"):
        out["syntax_file"] = exc.filename  # the file that does not parse here
    if isinstance(exc, ImportError):
        out["kind"] = "import"
        out["name"] = exc.name or ""
        out["module"] = getattr(exc, "path", None) or ""
        msg = str(exc)
        if "cannot import name" in msg:  # cannot import name 'X' from 'pkg.mod' (...)
            parts = msg.split("'")
            if len(parts) >= 4:
                out["name"], out["module"] = parts[1], parts[3]
    elif _is_offline(exc):
        out["kind"] = "offline"
    else:
        out["kind"] = "crash"
    return out


def _in_project(filename: str) -> bool:
    """A frame of the user's project (its copy, or the roots it is imported from)."""
    if filename.startswith("<"):  # <frozen runpy>, <string>
        return False
    path = os.path.realpath(filename)
    for root in os.environ.get(PATHS_ENV, "").split(os.pathsep):
        if root and path.startswith(os.path.realpath(root) + os.sep):
            return "site-packages" not in path
    return False


def run(script: str, args: list[str], *, steps: int, result_folder: str = "") -> dict[str, Any]:
    """Bootstrap, run `script` as __main__ with `args`, and return the outcome as a dict.
    `result_folder`: the run's temporary folder, where writes to a hosted notebook's working
    folder go (`caps.redirect_hosted`)."""
    started = time.perf_counter()
    result: dict[str, Any] = {
        "script": script,
        "steps": steps,
        "outcome": "finished",
        "trainers": [],
    }
    try:
        bootstrap(steps)
    except BaseException as e:  # noqa: BLE001 - the harness itself failed: say so, exit 2
        result.update(outcome="harness", error=describe(e, script))
        return result
    if result_folder:
        caps.redirect_hosted(result_folder)
    standing_in = os.environ.get(absent.OFF_ENV) != "1"
    reached = absent.reached(script) if standing_in else frozenset()
    if standing_in:
        result["stand_ins"] = absent.stand_in(reached)
    result["bootstrap_seconds"] = round(time.perf_counter() - started, 3)
    sys.argv = [script, *args]
    module = os.environ.get(MODULE_ENV, "")
    roots = [p for p in os.environ.get(PATHS_ENV, "").split(os.pathsep) if p]
    # As `python script.py` does: the script's folder first (`python -m`: the current folder);
    # then the project root and its src/, as an installed or in-repo package would be.
    sys.path[0] = os.getcwd() if module else os.path.dirname(os.path.abspath(script))
    sys.path[1:1] = [p for p in roots if p not in sys.path]
    if standing_in:
        result["stand_ins"] += absent.stand_in_left_out(reached)
    _release_our_packages()
    if os.environ.get(NOTEBOOK_ENV) == "1":
        _notebook_builtins()
    try:
        if ":" in module:  # a console script: what its generated launcher does
            sys.exit(_console_function(module)())
        elif module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            result.update(
                outcome="exit",
                exit_status=e.code if isinstance(e.code, int) else 1,
                error={
                    "kind": "exit",
                    "message": str(e.code) if not isinstance(e.code, int) else "",
                    "line": 0,
                    "source": "",
                },
            )
    except BaseException as e:  # noqa: BLE001 - every failure of the user's script is a finding
        result.update(outcome="error", error=describe(e, script))
    result["trainers"] = [_trainer_report(t) for t in caps.TRAINERS]
    result["filled"] = list(arguments.FILLED)
    result["missing_data"] = list(stand_ins.MISSING_DATA)
    result["placeholders"] = list(stand_ins.PLACEHOLDERS)
    result["sample_data"] = [list(pair) for pair in stand_ins.SAMPLE_DATA]
    result["misfit_adapters"] = list(stand_ins.MISFIT_ADAPTERS)
    result["overrides"] = list(caps.OVERRIDES)
    result["at_scale"] = list(caps.AT_SCALE)
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


_OURS = ("migrate", "codemods", "compat")


def _console_function(target: str) -> Any:
    """The function of a console script's `pkg.mod:func` (or `pkg.mod:Class.method`)."""
    import importlib

    module, _, attrs = target.partition(":")
    found: Any = importlib.import_module(module)
    for attr in attrs.split("."):
        found = getattr(found, attr)
    return found


def _display(*objects: Any, **kwargs: Any) -> None:
    """IPython's `display`, outside IPython: each object's text, as a notebook would show it."""
    for obj in objects:
        print(obj)


def _notebook_builtins() -> None:
    """Names IPython gives every notebook cell without an import (`display`), and a kernel that
    survives the Colab restart trick: `os.kill(os.getpid(), signal.SIGTERM)` after `%pip install`
    cells (whose lines the smoke run does not run) restarts the kernel, and the next cells run in
    a fresh one; here the same process goes on, with the kill listed among the overrides."""
    import builtins

    if not hasattr(builtins, "display"):
        builtins.display = _display  # type: ignore[attr-defined]
    kill = os.kill

    def kill_other(pid: int, sig: int) -> None:
        if pid in (os.getpid(), 0):  # the notebook's own kernel (or its process group)
            caps.note("notebook", "kernel restart", f"os.kill(own process, {sig})", "skipped")
            print("[trl-migrate smoke] the notebook restarts its kernel: skipped", file=sys.stderr)
            return
        kill(pid, sig)

    os.kill = kill_other


def _release_our_packages() -> None:
    """Forget our packages, so the user's script imports its own `migrate`/`compat`/`codemods`
    from its folder. What the harness needs it holds already (module globals, the patches)."""
    for name in [n for n in sys.modules if n.split(".")[0] in _OURS]:
        if sys.modules[name] is not sys.modules.get("__main__"):
            del sys.modules[name]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2:
        print(
            "usage: python -m migrate.reference.harness RESULT.json SCRIPT [ARGS...]",
            file=sys.stderr,
        )
        return 2
    result_path, script, args = argv[0], argv[1], argv[2:]
    steps = int(os.environ.get(caps.STEPS_ENV, "2"))
    folder = os.path.dirname(os.path.abspath(result_path))
    result = run(os.path.abspath(script), args, steps=steps, result_folder=folder)
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
