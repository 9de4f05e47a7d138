"""Stand-ins for modules a script imports for things other than training (images, logging, API
clients, plots, `.env` files) when this machine lacks them: a no-op module that answers every
attribute and call, so the training path is still proven. The smoke report names each one
("trained with stand-ins for: PIL, loguru"); `smoke --no-stand-ins` turns them off.

Only modules of the list below, only when not installed, and only those the script itself
imports (read with `ast` before it runs) are stood in for; the training stack never is. So is a
module of the repo's own packages that the repo leaves out and that is named like a file of
keys (`utils/eval/apikey.py`, kept out of git): the report names it too.
"""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

from migrate.kernel.imports import imported_modules

OFF_ENV = "TRL_MIGRATE_SMOKE_NO_STAND_INS"
MODULES = frozenset(
    {
        "PIL",
        "loguru",
        "openai",
        "anthropic",
        "dotenv",
        "matplotlib",
        "seaborn",
        "plotly",
        "aiohttp",
        "tiktoken",
        "termcolor",
        "colorama",
        "tensorboard",
        "tensorboardX",
        "gradio",
        "streamlit",
        "jsonlines",
        "IPython",
        "ipywidgets",
        "nltk",
        "wordcloud",
        # Metrics, debuggers, servers and domain scorers seen in public PPO repos: used for
        # evaluation, reward helpers or serving, not for the training step itself.
        "evaluate",
        "sklearn",
        "pudb",
        "ipdb",
        "line_profiler",  # `@profile` on functions of a vendored library (hlee131/Adapt)
        "flask",
        "fastapi",
        "starlette",
        "uvicorn",
        "rdkit",
        "sascorer",  # rdkit's synthetic-accessibility scorer, imported from rdkit's Contrib folder
        "kaggle_secrets",
        "rouge_score",
        "bert_score",
        "sacrebleu",
        "spacy",
        "textstat",
        "language_tool_python",
        "detoxify",
        "googleapiclient",
        "openpyxl",
        "jieba",
        "modelscope",
        "swanlab",
        "mlflow",
        "neptune",
        "comet_ml",
        "clearml",
        "boto3",
        "botocore",
        "passlib",
        "Levenshtein",
        "editdistance",
        "torchaudio",  # audio inputs of multimodal repos (LLaMA-Factory), never text training
        "torchvision",  # image transforms of multimodal notebooks, never a text PPO step
        "pynvml",  # GPU telemetry (pykoi)
        "radgraph",  # a radiology-report scorer used in rewards and evaluation
        "tyro",  # TRL 0.5-0.7 pulled it in and its scripts parsed flags with it; 1.13 does not
        "posthog",  # product telemetry (pykoi)
        # CUDA-only quantization: the tiny CPU stand-in model is never quantized (the harness
        # drops `quantization_config`), so its layers and optimizers are the torch ones below.
        "bitsandbytes",
        # Colab's own runtime (`drive.mount(...)`, `userdata.get(...)`): a notebook's setup, not
        # its training; stood in for alone, never the rest of the `google` namespace
        "google.colab",
        # Google Cloud clients (storage of results, logging): like boto3, never the training step
        # (stephendongg/rlhf-clinical-redteaming uploads its runs with google.cloud.storage)
        "google.cloud",
    }
)

# What some stand-in attributes are instead of a no-op: the plain torch class a CPU run without
# the module has in its place. A script that looks for `bnb.nn.Linear4bit` layers to put LoRA on
# finds the tiny model's `torch.nn.Linear` ones; `bnb.optim.PagedAdamW8bit(params, lr=...)` is
# torch's AdamW with the same learning rate and betas (bitsandbytes' own knobs dropped).
STANDS_FOR = {
    "bitsandbytes.nn.Linear4bit": "torch.nn.Linear",
    "bitsandbytes.nn.Linear8bitLt": "torch.nn.Linear",
    "bitsandbytes.nn.LinearFP4": "torch.nn.Linear",
    "bitsandbytes.nn.LinearNF4": "torch.nn.Linear",
    "bitsandbytes.nn.Embedding": "torch.nn.Embedding",
    "bitsandbytes.nn.StableEmbedding": "torch.nn.Embedding",
    "bitsandbytes.optim.Adam": "torch.optim.Adam",
    "bitsandbytes.optim.Adam8bit": "torch.optim.Adam",
    "bitsandbytes.optim.Adam32bit": "torch.optim.Adam",
    "bitsandbytes.optim.PagedAdam": "torch.optim.Adam",
    "bitsandbytes.optim.PagedAdam8bit": "torch.optim.Adam",
    "bitsandbytes.optim.PagedAdam32bit": "torch.optim.Adam",
    "bitsandbytes.optim.AdamW": "torch.optim.AdamW",
    "bitsandbytes.optim.AdamW8bit": "torch.optim.AdamW",
    "bitsandbytes.optim.AdamW32bit": "torch.optim.AdamW",
    "bitsandbytes.optim.PagedAdamW": "torch.optim.AdamW",
    "bitsandbytes.optim.PagedAdamW8bit": "torch.optim.AdamW",
    "bitsandbytes.optim.PagedAdamW32bit": "torch.optim.AdamW",
}


class _Anything(type):
    """The type of every stand-in: a class that answers any attribute, call, iteration or `with`
    with another such class. Being classes, stand-ins also work as the second argument of
    `isinstance` (datasets checks `isinstance(value, PIL.Image.Image)` once PIL is imported):
    nothing is an instance of them."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in_type(f"{cls.__name__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        # a decorator (`@profile` of line_profiler) hands back what it decorates: the function
        # or class stays itself, not a stand-in
        if len(args) == 1 and not kwargs and _decorated(args[0]):
            return args[0]
        if cls.__name__.endswith(".subplots"):  # `fig, ax = plt.subplots(...)`
            return (_stand_in_type(f"{cls.__name__}[0]"), _stand_in_type(f"{cls.__name__}[1]"))
        return cls

    def __iter__(cls) -> Any:
        return iter(())

    def __enter__(cls) -> Any:
        return cls

    def __exit__(cls, *exc: Any) -> None:
        return None

    # Text helpers (colorama's `Fore.RED + text`, termcolor's `colored(...)` in an f-string)
    # read as the empty string, so log lines still build.
    def __str__(cls) -> str:
        return ""

    def __format__(cls, spec: str) -> str:
        return ""

    # Paths read as the empty path: module-level code joins a stand-in's folder with a file
    # name (`sys.path.append(os.path.join(RDConfig.RDContribDir, "SA_Score"))` under rdkit).
    def __fspath__(cls) -> str:
        return ""

    def __add__(cls, other: Any) -> Any:
        return other if isinstance(other, str) else cls

    def __radd__(cls, other: Any) -> Any:
        return other if isinstance(other, str) else cls

    # What a score of a stood-in metric is read as after training: an entry of its result
    # (`toxicity.compute(...)["toxicity"]`) is another stand-in, and arithmetic on one (numpy's
    # mean divides the sum by the count, a report rounds it) gives the stand-in back. No number
    # is made up: printed, it reads as the empty string, as above; compared, it still raises.
    def __getitem__(cls, key: Any) -> Any:
        return _stand_in_type(f"{cls.__name__}[]")

    def _same(cls, *other: Any) -> Any:
        return cls

    __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = __rpow__ = _same
    __neg__ = __pos__ = __abs__ = __round__ = _same


def _decorated(value: Any) -> bool:
    """Whether `value` is what a decorator is handed: a function, a method or a class (not a
    stand-in, which is a class too)."""
    import inspect

    if isinstance(value, _Anything):
        return False
    return inspect.isfunction(value) or inspect.ismethod(value) or inspect.isclass(value)


def _stand_in_type(name: str) -> Any:
    return _Anything(name, (), {})


def imported(text: str) -> set[str]:
    """Dotted names of every module `text` imports (absolute imports only)."""
    try:
        return imported_modules(ast.parse(text))
    except (SyntaxError, ValueError):
        return set()


IMPORTS_ENV = "TRL_MIGRATE_SMOKE_IMPORTS"  # modules the project files the script reaches import


def reached(script: str) -> frozenset[str]:
    """The modules `script` imports, and those its project's files import (IMPORTS_ENV): what
    `stand_in` and `stand_in_left_out` are given."""
    try:
        with open(script, encoding="utf-8", errors="replace") as fh:
            names = imported(fh.read())
    except OSError:
        names = set()
    return frozenset(names | {n for n in os.environ.get(IMPORTS_ENV, "").split(",") if n})


def stand_in(names: frozenset[str]) -> list[str]:
    """Put a stand-in in sys.modules for each listed module among `names` (what the script
    reaches: `reached`) that is not installed (and the submodules imported); the top-level
    names, sorted."""
    used = sorted(m for m in MODULES if any(_within(n, m) for n in names) and not _installed(m))
    for name in sorted(n for n in names if any(_within(n, m) for m in used)):
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            if not _installed(".".join(parts[:i])):  # `google` of `google.colab` may be there
                _module(".".join(parts[:i]))
    if "tyro" in used:
        sys.modules["tyro"].cli = _tyro_cli  # type: ignore[attr-defined]
    if "matplotlib" in used and _installed("pandas"):
        # pandas draws `df.hist()` and `df.plot()` through matplotlib: those are no-ops too
        import pandas.plotting._core as plotting

        plotting._get_plot_backend = lambda backend=None: _stand_in_type("pandas.plotting")
    if used:
        sys.meta_path.append(_Submodules(frozenset(used)))
    for name in used:
        print(
            f"[trl-migrate smoke] {name} is not installed here: a no-op stand-in answers the "
            f"script's {name} calls",
            file=sys.stderr,
        )
    return used


def stand_in_left_out(names: frozenset[str]) -> list[str]:
    """Stand-ins for the modules among `names` (`reached`) that are files of keys the repo
    leaves out (`_missing_secret`); the names, sorted.
    Called once the script's folders are on sys.path, where the repo's packages are found."""
    secrets = sorted(n for n in names if _missing_secret(n))
    for name in secrets:
        _module(name)
        print(
            f"[trl-migrate smoke] {name} is a module of the repo that it does not include (a "
            "file of keys kept out of version control): a no-op stand-in answers for it",
            file=sys.stderr,
        )
    return secrets


# The last part of a module name that holds API keys or tokens, which repos keep out of git.
SECRET_MODULES = frozenset(
    {
        "apikey",
        "api_key",
        "apikeys",
        "api_keys",
        "keys",
        "secret",
        "secrets",
        "credentials",
        "creds",
        "tokens",
        "private_config",
        "config_private",
        "local_settings",
    }
)


def _missing_secret(name: str) -> bool:
    """Whether `name` (`utils.eval.apikey`) is a submodule of one of the script's own packages
    whose file is not there, and named like a file of secrets. Only the top package is looked
    up (nothing is imported)."""
    parts = name.split(".")
    if len(parts) < 2 or parts[-1].lower() not in SECRET_MODULES or name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    places = [os.fspath(p) for p in (spec.submodule_search_locations or [])] if spec else []
    if not places or any("site-packages" in p for p in places):
        return False  # not the repo's own package
    for place in places:
        stem = os.path.join(place, *parts[1:])
        if os.path.exists(stem + ".py") or os.path.isdir(stem):
            return False
        if not os.path.isdir(os.path.join(place, *parts[1:-1])):
            return False  # a folder on the way is missing too: not a left-out file
    return True


def _tyro_cli(f: Any, *, args: Any = None, default: Any = None, **_: Any) -> Any:
    """`tyro.cli(ScriptArguments)` with no flags: what tyro builds then, the dataclass (or the
    function's result) from its defaults, or `default`. Flags it would parse stop the run with a
    message, never a silent default."""
    argv = list(sys.argv[1:] if args is None else args)
    if argv:
        raise SystemExit(
            f"[trl-migrate smoke] tyro is not installed here and its stand-in parses no flags "
            f"(given: {' '.join(argv)}); install tyro to run with them"
        )
    return default if default is not None else f()


def _within(name: str, module: str) -> bool:
    """Whether module `name` is `module` or one of its submodules."""
    return name == module or name.startswith(module + ".")


def _installed(name: str) -> bool:
    """Whether `name` imports here (a dotted name whose parent is missing does not)."""
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class _Submodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `PIL.Image` and the like once `PIL` is stood in for: a library that sees the
    stand-in may import its submodules (`import PIL.Image`), which get stand-ins too."""

    def __init__(self, tops: frozenset[str]) -> None:
        self.tops = tops  # the modules stood in for (`PIL`, `google.colab`)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not any(_within(fullname, top) for top in self.tops):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:  # type: ignore[override]
        return _module(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


@functools.cache
def _torch_class(dotted: str) -> Any:
    """The torch class `dotted` names; an optimizer comes as a subclass that drops the keywords
    torch's own does not take (`optim_bits`, `percentile_clipping`, `is_paged`, ...)."""
    import importlib
    import inspect

    module, _, attr = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    if module == "torch.nn" and attr == "Linear":
        return _quantized_linear()
    if not module.startswith("torch.optim"):
        return cls
    taken = set(inspect.signature(cls.__init__).parameters)

    def __init__(self: Any, params: Any, *args: Any, **kwargs: Any) -> None:
        # lr, betas, eps, weight_decay: the same places in bitsandbytes' signatures and torch's
        cls.__init__(self, params, *args[:4], **{k: v for k, v in kwargs.items() if k in taken})

    return type(attr, (cls,), {"__init__": __init__})


@functools.cache
def _quantized_linear() -> Any:
    """`bnb.nn.Linear4bit` and the like: torch's Linear, of which GPT-2's `Conv1D` layers count
    as instances too, since bitsandbytes quantizes both kinds when a model loads in 4 or 8 bits."""
    import torch
    from transformers.pytorch_utils import Conv1D

    class QuantizedLinear(type(torch.nn.Linear)):  # type: ignore[misc]
        def __instancecheck__(cls, obj: Any) -> bool:
            return isinstance(obj, (torch.nn.Linear, Conv1D))

    return QuantizedLinear("Linear", (torch.nn.Linear,), {})


def _module(name: str) -> types.ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__path__ = []  # a package: `import matplotlib.pyplot` finds its submodule here

    def attribute(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        dotted = f"{name}.{attr}"
        if dotted in STANDS_FOR:
            return _torch_class(STANDS_FOR[dotted])
        if any(key.startswith(dotted + ".") for key in STANDS_FOR):
            return _module(dotted)  # `bnb.nn` with no `import bitsandbytes.nn`
        return _stand_in_type(f"{name}.{attr}")

    module.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:  # a repo's package imports later and finds its stand-in child
        setattr(sys.modules[parent], child, module)
    return module
