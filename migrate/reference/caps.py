"""The smoke harness's caps and guards: every `TrainingArguments` capped to a few small steps with
no saving, trackers or hub; the network blocked but for the loopback; trackers a script imports
stubbed when missing; patches applied right after a module is imported."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "", None}


STEPS_ENV = "TRL_MIGRATE_SMOKE_STEPS"


MAX_COMPLETION = 8  # tokens generated per completion by GRPO/RLOO during a smoke run


NUM_GENERATIONS = 2


BATCH = 2


TRAINERS: list[Any] = []  # every Trainer the script built, in order


class NetworkBlockedError(OSError):
    """Raised instead of opening a connection: smoke runs are offline."""


def cap_args(args: Any, steps: int) -> None:
    """Make any TrainingArguments (GRPO/RLOO/SFT... configs) run `steps` small steps, here."""
    import torch

    def put(name: str, value: Any) -> None:
        if hasattr(args, name):
            old = getattr(args, name)
            if old != value and not _same(old, value):
                note(type(args).__name__, name, old, value)
            setattr(args, name, value)

    put("max_steps", steps)
    put("save_strategy", "no")
    put("eval_strategy", "no")
    put("do_eval", False)
    put("load_best_model_at_end", False)
    put("push_to_hub", False)
    put("report_to", "none")
    put("logging_strategy", "steps")
    put("logging_steps", 1)
    put("logging_nan_inf_filter", False)  # a NaN loss must reach the log, not be averaged away
    put("dataloader_num_workers", 0)
    put("dataloader_pin_memory", False)
    put("torch_compile", False)
    put("auto_find_batch_size", False)
    put("gradient_accumulation_steps", 1)
    put(
        "per_device_train_batch_size",
        min(getattr(args, "per_device_train_batch_size", BATCH) or BATCH, BATCH),
    )
    put("per_device_eval_batch_size", BATCH)
    put("deepspeed", None)
    put("fsdp", "")
    if bitsandbytes_optim(str(getattr(args, "optim", ""))):
        put("optim", "adamw_torch")
    if not torch.cuda.is_available():
        put("use_cpu", True)
        put("fp16", False)
    out = getattr(args, "output_dir", None)
    if isinstance(out, str) and os.path.isabs(out) and not out.startswith(os.getcwd()):
        put(
            "output_dir",
            os.path.join(os.getcwd(), "output", os.path.basename(out.rstrip("/")) or "output"),
        )
    if hasattr(args, "num_generations"):  # GRPO, RLOO: small groups, short completions, no vLLM
        put("num_generations", NUM_GENERATIONS)
        put("num_generations_eval", None)
        put("per_device_train_batch_size", NUM_GENERATIONS)
        put("steps_per_generation", None)
        put("generation_batch_size", None)
        put(
            "max_completion_length",
            min(getattr(args, "max_completion_length", None) or MAX_COMPLETION, MAX_COMPLETION),
        )
        put("use_vllm", False)
        put("use_transformers_continuous_batching", False)
        put("use_transformers_paged", False)
        put("log_completions", False)
    for name, limit in (("max_length", 128), ("max_prompt_length", 64), ("max_seq_length", 128)):
        if name == "max_length" and _filters_by_length(args):
            continue
        if getattr(args, name, None):
            put(name, min(getattr(args, name), limit))


def _filters_by_length(args: Any) -> bool:
    """Whether `args` is a RewardConfig, whose `max_length` drops the pairs longer than it
    instead of cutting them: capped, it would empty a dataset of pairs the script tokenized (and
    padded) to its own length, which the real run trains on."""
    return any(cls.__name__ == "RewardConfig" for cls in type(args).__mro__)


def bitsandbytes_optim(name: str) -> bool:
    """Whether TrainingArguments' optimizer `name` is one of bitsandbytes' (8-bit, paged, Lion,
    AdEMAMix: `adamw_bnb_8bit`, `paged_adamw_32bit`, `lion_32bit`, ...), which need CUDA and the
    bitsandbytes package; a smoke run trains with `adamw_torch` instead, listed as an override."""
    name = name.lower()
    return any(part in name for part in ("bnb", "8bit", "paged", "lion", "ademamix"))


# Overrides every capped config got: {"config", "field", "was", "now"}, in order, each once.
OVERRIDES: list[dict[str, Any]] = []
# What the script's own settings would fail with at real scale, before any cap.
AT_SCALE: list[str] = []
# Fields a smoke run always sets, whatever the script said: not worth a line per config.
QUIET = frozenset(
    {
        "logging_strategy",
        "logging_steps",
        "logging_nan_inf_filter",
        "dataloader_num_workers",
        "dataloader_pin_memory",
        "per_device_eval_batch_size",
        "num_generations_eval",
        "log_completions",
    }
)


def _same(old: Any, new: Any) -> bool:
    return str(old) == str(new) or (old in (None, "", [], "none") and new in (None, "", "none"))


def note(config: str, field: str, was: Any, now: Any) -> None:
    if field in QUIET:
        return
    entry = {"config": config, "field": field, "was": _plain(was), "now": _plain(now)}
    if entry not in OVERRIDES:
        OVERRIDES.append(entry)


def _plain(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool, type(None))) else str(value)


_TRIAL = False  # building check_at_scale's copy: no caps, no second check


def check_at_scale(args: Any) -> None:
    """Build a copy of the config at the script's own values, as the real run would: a check
    that fails there (batch not divisible by num_generations, precision this device lacks) is
    recorded in AT_SCALE, since the capped run would never hit it. A precision this device lacks
    stops the config's checks first; the copy is then built again with it off, so the checks
    after it (which a device with that precision would meet) are run too."""
    import copy

    global _TRIAL
    aside = ""
    for _ in range(2):
        trial = copy.copy(args)
        if aside:
            trial.bf16 = trial.fp16 = False
        _TRIAL = True
        try:
            type(args).__post_init__(trial)  # the config's own checks too (GRPO's, RLOO's)
            return
        except Exception as e:  # noqa: BLE001 - any failure of the real config is what we report
            text = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            message = (
                f"{type(args).__name__} at the script's own settings{aside}: "
                f"{type(e).__name__}: {text}"
            )
            if message not in AT_SCALE:
                AT_SCALE.append(message)
            precision = getattr(args, "bf16", False) or getattr(args, "fp16", False)
            if aside or not precision or not _about_precision(text):
                return
            aside = " (its precision aside, as on a device that has it)"
        finally:
            _TRIAL = False


def _about_precision(text: str) -> bool:
    """Whether a config's error is its precision check (bf16/fp16 this device lacks)."""
    lowered = text.lower()
    return "bf16" in lowered or "fp16" in lowered or "half precision" in lowered


def patch_training_args(module: Any, steps: int) -> None:
    ta = module.TrainingArguments
    post_init = ta.__post_init__

    def __post_init__(self):  # type: ignore[no-untyped-def]
        if _TRIAL:  # the uncapped copy of check_at_scale
            post_init(self)
            return
        check_at_scale(self)
        cap_args(self, steps)
        post_init(self)

    ta.__post_init__ = __post_init__


def _no_push(self: Any, *args: Any, **kwargs: Any) -> None:
    print("trl-migrate smoke: push_to_hub skipped", file=sys.stderr)


def _purely_quantized(trainer: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A model loaded in 8/4 bits (a quantization this run left out: bitsandbytes needs a GPU)
    handed to a trainer with no adapter (no `peft_config`, no PEFT model): transformers' Trainer
    refuses to fine-tune a purely quantized model, so the real run stops there (AT_SCALE)."""
    model = kwargs.get("model", args[0] if args else None)
    if not getattr(model, "_trl_migrate_quantized", False):
        return
    if kwargs.get("peft_config") is not None or getattr(model, "peft_config", None):
        return
    message = (
        f"{trainer} at the script's own settings: its model was loaded in 8/4 bits (which the "
        "smoke run left out) and gets no adapter (`peft_config` is None): transformers' Trainer "
        "refuses to fine-tune a purely quantized model"
    )
    if message not in AT_SCALE:
        AT_SCALE.append(message)


def patch_trainer(module: Any, steps: int) -> None:
    trainer_init = module.Trainer.__init__

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        _purely_quantized(type(self).__name__, args, kwargs)
        trainer_init(self, *args, **kwargs)
        self.args.max_steps = steps  # in case the script changed it after building the config
        TRAINERS.append(self)

    module.Trainer.__init__ = __init__
    module.Trainer.push_to_hub = _no_push


MAX_NEW_TOKENS = 16  # tokens a script's own `generate` (a sample, an evaluation) makes at most


def patch_generate(module: Any) -> None:
    """`model.generate(..., max_new_tokens=256)` (and a pipeline's, and one a generation config
    asks for) makes at most MAX_NEW_TOKENS tokens in a smoke run, listed among the overrides:
    a notebook that samples 1,000 stand-in prompts after training would otherwise spend the
    run's time there. The trainers' own generation is capped by their config already."""
    mixin = module.GenerationMixin
    generate = mixin.generate

    def capped(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        config = kwargs.get("generation_config") or getattr(self, "generation_config", None)
        asked = kwargs.get("max_new_tokens")
        if asked is None and config is not None:
            asked = getattr(config, "max_new_tokens", None)
        if isinstance(asked, int) and asked > MAX_NEW_TOKENS:
            note("generate", "max_new_tokens", asked, MAX_NEW_TOKENS)
            kwargs["max_new_tokens"] = MAX_NEW_TOKENS
        return generate(self, *args, **kwargs)

    capped.__wrapped__ = generate  # type: ignore[attr-defined]
    mixin.generate = capped


def patch_hub(module: Any) -> None:
    module.PushToHubMixin.push_to_hub = _no_push


# huggingface_hub's ways of logging in: each asks the hub who the token belongs to, which an
# offline smoke run cannot; nothing that trains depends on it (the stand-ins are local)
HUB_LOGINS = ("login", "notebook_login", "interpreter_login")


def patch_hub_login(module: Any) -> None:
    """`huggingface_hub.login(token=...)` (and the notebook and interpreter prompts) are skipped
    with a line on stderr and listed among the overrides, so a script that logs in first still
    reaches its training."""

    def skipped(name: str) -> Any:
        def login(*args: Any, **kwargs: Any) -> None:
            note("huggingface_hub", name, "called", "skipped (offline)")
            print(f"trl-migrate smoke: huggingface_hub.{name}() skipped", file=sys.stderr)

        return login

    for name in HUB_LOGINS:
        setattr(module, name, skipped(name))


def _is_cuda(device: Any) -> bool:
    text = str(device) if device is not None else ""
    return text == "cuda" or text.startswith("cuda:")


def patch_cuda(torch: Any) -> None:
    """On a machine without a GPU, `.cuda()` and `.to("cuda")` of models and tensors stay on the
    CPU instead of raising "Torch not compiled with CUDA enabled": a script that hard-codes its
    GPU is still proven, and the report lists the override (torch device cuda -> cpu)."""
    if torch.cuda.is_available():
        return
    module_cls, tensor_cls = torch.nn.Module, torch.Tensor
    module_to, tensor_to = module_cls.to, tensor_cls.to

    def moved(device: Any) -> None:
        note("torch", "device", str(device), "cpu")

    def module_cuda(self, device=None):  # type: ignore[no-untyped-def]
        moved(device if device is not None else "cuda")
        return self

    def tensor_cuda(self, device=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        moved(device if device is not None else "cuda")
        return self

    def _cpu(args: tuple, kwargs: dict) -> tuple:  # type: ignore[type-arg]
        if args and _is_cuda(args[0]):
            moved(args[0])
            args = ("cpu", *args[1:])
        if _is_cuda(kwargs.get("device")):
            moved(kwargs["device"])
            kwargs = {**kwargs, "device": "cpu"}
        return args, kwargs

    def module_to_cpu(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        args, kwargs = _cpu(args, kwargs)
        return module_to(self, *args, **kwargs)

    def tensor_to_cpu(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        args, kwargs = _cpu(args, kwargs)
        return tensor_to(self, *args, **kwargs)

    def set_device(device: Any) -> None:  # `torch.cuda.set_device(1)`: the CPU it is
        moved(f"cuda:{device}" if isinstance(device, int) else device)

    torch.cuda.set_device = set_device
    module_cls.cuda = module_cuda
    module_cls.to = module_to_cpu
    tensor_cls.cuda = tensor_cuda
    tensor_cls.to = tensor_to_cpu


# The working folders of hosted notebooks (Colab's /content, Kaggle's /kaggle/working): a
# notebook saves its results there by absolute path (`pickle.dump(..., open("/content/x.pkl",
# "wb"))`), which on this machine would write outside the run's folder, or fail where the folder
# does not exist.
HOSTED = ("/content", "/kaggle/working")


_HOSTED: list[str] = []  # the run's folder, once redirect_hosted has been called


def hosted(path: Any, *, write: bool = False) -> Any:
    """`path` under the run's folder where it lies under a hosted notebook's working folder and
    is written (`write`), or was written there before; else `path` as it is (a file the machine
    really holds there is still read)."""
    text = os.fspath(path) if _HOSTED and isinstance(path, (str, os.PathLike)) else None
    if not isinstance(text, str):
        return path  # a file descriptor, bytes, or no redirect
    for root in HOSTED:
        if text == root or text.startswith(root + "/"):
            target = os.path.join(_HOSTED[0], text.lstrip("/"))
            if write or _real_exists(target):
                note("hosted notebook", "folder", root, os.path.join(_HOSTED[0], root.lstrip("/")))
                return target
    return path


_real_exists = os.path.exists


def redirect_hosted(folder: str) -> None:
    """Send what the script writes under a hosted notebook's working folder to the same path
    under `folder` (the run's temporary folder), and read it back from there: `open`,
    `os.makedirs`, `os.mkdir`, `os.path.exists`/`isdir`/`isfile`, `os.listdir` here, and the
    `save_pretrained`/`from_pretrained` of models, tokenizers and adapters (stand_ins.py), whose
    files safetensors and tokenizers write outside Python. Each folder redirected is listed
    among the overrides. Files under them that the script only reads are left alone (a missing
    data file gets the stand-in rows)."""
    import builtins
    import io

    _HOSTED[:] = [folder]
    real_open, real_makedirs, real_mkdir = builtins.open, os.makedirs, os.mkdir
    real_listdir = os.listdir
    writing = "wax+"

    def open_here(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        write = any(c in mode for c in writing)
        target = hosted(file, write=write)
        if write and target is not file:
            real_makedirs(os.path.dirname(target), exist_ok=True)
        return real_open(target, mode, *args, **kwargs)

    def makedirs_here(name: Any, *args: Any, **kwargs: Any) -> None:
        real_makedirs(hosted(name, write=True), *args, **kwargs)

    def mkdir_here(path: Any, *args: Any, **kwargs: Any) -> None:
        target = hosted(path, write=True)
        if target is not path:
            real_makedirs(os.path.dirname(target), exist_ok=True)
        real_mkdir(target, *args, **kwargs)

    def asking(check: Any) -> Any:
        def here(*args: Any, **kwargs: Any) -> Any:
            if args:  # `os.listdir()` takes no path: the current folder's
                args = (hosted(args[0]), *args[1:])
            return check(*args, **kwargs)

        return here

    builtins.open = io.open = _Standing(open_here, "builtins", "open")  # io.open: pathlib's
    os.makedirs = _Standing(makedirs_here, "os", "makedirs")  # type: ignore[assignment]
    os.mkdir = _Standing(mkdir_here, "os", "mkdir")  # type: ignore[assignment]
    os.listdir = _Standing(asking(real_listdir), "os", "listdir")  # type: ignore[assignment]
    for check in ("exists", "isdir", "isfile"):
        standing = _Standing(asking(getattr(os.path, check)), os.path.__name__, check)
        setattr(os.path, check, standing)


class _Standing:
    """A function standing where `module.name` stood (`builtins.open`). Not a function itself:
    dill, which datasets uses to hash a generator with the globals it reads (`open` among
    them), follows a function's closure and globals, and this one's lead back to it (the
    original `os.makedirs` calls the module's `makedirs`, this); an object it does not follow,
    and pickles as a reference to the name, as it did the original."""

    def __init__(self, function: Any, module: str, name: str) -> None:
        self._function = function
        self.__module__, self.__name__, self.__qualname__ = module, name, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __reduce__(self) -> str:
        return self.__name__  # pickled as the global `module.name`, which this object now is


def patch_network() -> None:
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex
    getaddrinfo = socket.getaddrinfo

    def allowed(address: Any) -> bool:
        return (
            not isinstance(address, tuple)
            or address[0] in _LOCAL_HOSTS
            or str(address[0]).startswith("127.")
        )

    def blocked(address: Any) -> NetworkBlockedError:
        return NetworkBlockedError(
            f"network access is disabled in a smoke run (offline): tried to reach {address!r}"
        )

    def guarded_connect(self, address):  # type: ignore[no-untyped-def]
        if not allowed(address):
            raise blocked(address)
        return connect(self, address)

    def guarded_connect_ex(self, address):  # type: ignore[no-untyped-def]
        if not allowed(address):
            raise blocked(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not allowed((host,)):
            raise blocked(host)
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo


TRACKERS = ("wandb",)  # experiment trackers scripts import directly; smoke runs disable them anyway


class _NoOp:
    """Answers any attribute or call with itself: what a disabled tracker does."""

    def __call__(self, *args: Any, **kwargs: Any) -> _NoOp:
        return self

    def __getattr__(self, name: str) -> _NoOp:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __enter__(self) -> _NoOp:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


SWEEP_ENV = "TRL_MIGRATE_SMOKE_SWEEP"  # JSON: the sweep yaml, and the values it gives


class _Config(dict):  # type: ignore[type-arg]
    """`wandb.config` of the stand-in: the values a W&B sweep of the script would give, read as
    `config["lr"]` or `config.lr`; `update(...)` as wandb's."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def sweep_config() -> _Config:
    """The stand-in's `wandb.config`: empty, or, for a script a W&B sweep of the repo runs
    (`program: sweeps/sweep.py`), the first value of each of the sweep's parameters (listed
    among the overrides)."""
    import json

    given = json.loads(os.environ.get(SWEEP_ENV) or "{}")
    for key, value in given.get("parameters", {}).items():
        note("wandb sweep", key, given.get("sweep", ""), value)
    return _Config(given.get("parameters", {}))


def stub_missing_trackers() -> None:
    """A tracker the script imports but this machine lacks (`import wandb` in TRL's sentiment
    notebooks) is a no-op module: trackers are off in a smoke run, and a missing one says nothing
    about the migration. Installed trackers are left alone (their own disabled modes apply)."""
    import importlib.machinery
    import importlib.util
    import types

    for name in TRACKERS:
        if name in sys.modules or importlib.util.find_spec(name) is not None:
            continue
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__path__ = []  # a package: `import wandb.sdk...` (EMZEDI/olmo_continual)
        stand_in = _NoOp()

        def attribute(attr: str, _n: _NoOp = stand_in) -> Any:
            return _n.__getattr__(attr)

        module.__getattr__ = attribute  # type: ignore[method-assign]
        if name == "wandb":
            module.config = sweep_config()  # type: ignore[attr-defined]
        sys.modules[name] = module
        from migrate.reference import absent  # its submodules get absent's stand-ins

        sys.meta_path.append(absent._Submodules(frozenset({name})))
        print(
            f"[trl-migrate smoke] {name} is not installed here: a no-op stand-in answers the "
            f"script's {name} calls",
            file=sys.stderr,
        )


class _PostImportFinder:
    """A meta-path finder that runs a hook right after a top-level module has been executed."""

    def __init__(self, name: str, hook: Any) -> None:
        self.name, self.hook = name, hook

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        import importlib.machinery

        # Stay in sys.meta_path until the module runs: importlib.util.find_spec (TRL checks
        # what is installed that way) asks finders too, without importing anything.
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, hook, finder = spec.loader, self.hook, self

        class _Loader:
            def create_module(self, spec):  # type: ignore[no-untyped-def]
                return loader.create_module(spec)

            def exec_module(self, module):  # type: ignore[no-untyped-def]
                loader.exec_module(module)
                if finder in sys.meta_path:
                    sys.meta_path.remove(finder)
                hook(module)

        spec.loader = _Loader()  # type: ignore[assignment]
        return spec


def after_import(name: str, hook: Any) -> None:
    if name in sys.modules:
        hook(sys.modules[name])
    else:
        sys.meta_path.insert(0, _PostImportFinder(name, hook))
