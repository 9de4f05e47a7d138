"""The smoke harness: run a user's script unmodified on tiny offline stand-ins, a few steps.

`python -m migrate.reference.harness RESULT.json SCRIPT [ARGS...]` is the subprocess that
`trl-migrate smoke SCRIPT` starts (migrate/smoke.py). Before the script runs, `bootstrap`:

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

import json
import math
import os
import runpy
import socket
import sys
import time
import traceback
from typing import Any

# Imported now, and used through this name only: before the user's script runs, our packages
# leave sys.modules (see `_release_our_packages`), so a repo's own `migrate` or `compat`
# module imports as the repo's. tiny imports torch and transformers only inside its functions.
from migrate.reference import tiny

STEPS_ENV = "TRL_MIGRATE_SMOKE_STEPS"
STORE_ENV = "TRL_MIGRATE_SMOKE_STORE"  # where the tiny models are saved (default: ./tiny-models)
MAX_COMPLETION = 8  # tokens generated per completion by GRPO/RLOO during a smoke run
NUM_GENERATIONS = 2
BATCH = 2
MODEL_VOCAB = 512  # larger than the tokenizer's ~380 tokens, so scripts may add a few tokens

_ORIGINAL: dict[str, Any] = {}
TRAINERS: list[Any] = []  # every Trainer the script built, in order


class NetworkBlockedError(OSError):
    """Raised instead of opening a connection: smoke runs are offline."""


# -- tiny model store -------------------------------------------------------------------------

_tokenizer: Any = None


def _shared_tokenizer() -> Any:
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = tiny.tiny_tokenizer()
    return _tokenizer


def tiny_dir(kind: str, num_labels: int = 1) -> str:
    """A folder with a tiny `kind` model (causal, seqcls, seq2seq) and the shared tokenizer."""
    store = os.environ.get(STORE_ENV) or os.path.abspath("tiny-models")
    name = f"seqcls-{num_labels}" if kind == "seqcls" else kind
    path = os.path.join(store, name)
    if os.path.exists(os.path.join(path, "config.json")):
        return path
    if kind == "causal":
        model = tiny.tiny_causal_lm(vocab_size=MODEL_VOCAB)
    elif kind == "seqcls":
        model = tiny.tiny_seq_classifier(num_labels, vocab_size=MODEL_VOCAB)
    else:
        model = _tiny_seq2seq()
    tmp = f"{path}.tmp{os.getpid()}"
    model.save_pretrained(tmp)
    _shared_tokenizer().save_pretrained(tmp)
    try:
        os.replace(tmp, path)
    except OSError:  # another process saved it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _tiny_seq2seq() -> Any:
    import torch
    from transformers import AutoModelForSeq2SeqLM, T5Config

    config = T5Config(
        vocab_size=MODEL_VOCAB,
        d_model=64,
        d_kv=16,
        d_ff=128,
        num_layers=2,
        num_heads=4,
        pad_token_id=tiny.PAD_ID,
        eos_token_id=tiny.EOS_ID,
        decoder_start_token_id=tiny.PAD_ID,
    )
    torch.manual_seed(0)
    return AutoModelForSeq2SeqLM.from_config(config)


def _is_local(name: Any) -> bool:
    """Whether `from_pretrained(name)` can load without a download (so it is not stood in for).
    None, which an unset command-line argument gives, is stood in for like a hub id."""
    if name is None:
        return False
    if not isinstance(name, (str, os.PathLike)):
        return True  # a config or model object: the real loader handles it
    path = os.fspath(name)
    return os.path.isdir(path) or os.path.isfile(path)


_TOKENIZER_KWARGS = ("padding_side", "truncation_side", "model_max_length")


_AUTO_KINDS = {
    "AutoModel": "causal",
    "AutoModelForCausalLM": "causal",
    "AutoModelForSequenceClassification": "seqcls",
    "AutoModelForSeq2SeqLM": "seq2seq",
    "AutoConfig": "causal",
    "AutoTokenizer": "tokenizer",
    "AutoProcessor": "tokenizer",
}


def _patch_auto_classes(module: Any) -> None:
    """The Auto classes defined in `module` (one of transformers.models.auto.*)."""
    for name, kind in _AUTO_KINDS.items():
        cls = module.__dict__.get(name)
        if cls is None:
            continue
        original = cls.from_pretrained.__func__

        def from_pretrained(cls, name_or_path, *args, _original=original, _kind=kind, **kwargs):  # type: ignore[no-untyped-def]
            if _is_local(name_or_path):
                return _original(cls, name_or_path, *args, **kwargs)
            if _kind == "tokenizer":
                kept = {k: v for k, v in kwargs.items() if k in _TOKENIZER_KWARGS}
                return _original(cls, tiny_dir("causal"), **kept)
            if _kind == "seqcls":
                return _original(cls, tiny_dir("seqcls", int(kwargs.get("num_labels", 1))))
            # dtype, device_map, quantization_config, attn_implementation, revision, token...
            # describe the real checkpoint: the tiny model loads in float32 on the CPU.
            return _original(cls, tiny_dir(_kind))

        setattr(cls, "from_pretrained", classmethod(from_pretrained))


def _patch_models(module: Any) -> None:
    """`Qwen3ForCausalLM.from_pretrained(id)` and the like (TRL's `create_model_from_path` loads
    models this way): the tiny stand-in of the same kind, through the Auto classes."""
    import transformers

    PreTrainedModel = module.PreTrainedModel
    model_original = PreTrainedModel.from_pretrained.__func__

    def model_from_pretrained(cls, name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_local(name_or_path):
            return model_original(cls, name_or_path, *args, **kwargs)
        name = cls.__name__
        if "SequenceClassification" in name:
            return transformers.AutoModelForSequenceClassification.from_pretrained(
                tiny_dir("seqcls", int(kwargs.get("num_labels", 1)))
            )
        if (
            getattr(getattr(cls, "config_class", None), "is_encoder_decoder", False)
            or "Seq2Seq" in name
        ):
            return transformers.AutoModelForSeq2SeqLM.from_pretrained(tiny_dir("seq2seq"))
        return transformers.AutoModelForCausalLM.from_pretrained(tiny_dir("causal"))

    PreTrainedModel.from_pretrained = classmethod(model_from_pretrained)


def _patch_tokenizers(module: Any) -> None:
    """`GPT2Tokenizer.from_pretrained(id)` and the like: the shared tiny tokenizer."""
    import transformers

    base = module.PreTrainedTokenizerBase
    tok_original = base.from_pretrained.__func__

    def tok_from_pretrained(cls, name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_local(name_or_path):
            return tok_original(cls, name_or_path, *args, **kwargs)
        kept = {k: v for k, v in kwargs.items() if k in _TOKENIZER_KWARGS}
        return transformers.AutoTokenizer.from_pretrained(tiny_dir("causal"), **kept)

    base.from_pretrained = classmethod(tok_from_pretrained)


# -- datasets ---------------------------------------------------------------------------------

# Columns the scripts we know read, per dataset id; anything else gets FALLBACK.
DATASETS: dict[str, tuple[str, ...]] = {
    "stanfordnlp/imdb": ("text", "label"),
    "imdb": ("text", "label"),
    "trl-internal-testing/descriptiveness-sentiment-trl-style": ("prompt", "chosen", "rejected"),
    "trl-internal-testing/tldr-preference-sft-trl-style": ("prompt", "completion", "messages"),
    "trl-lib/tldr": ("prompt", "completion"),
    "trl-lib/ultrafeedback_binarized": ("chosen", "rejected"),
    "Anthropic/hh-rlhf": ("chosen", "rejected"),
    "lvwerra/stack-exchange-paired": ("question", "response_j", "response_k"),
    "openai/gsm8k": ("question", "answer"),
    "gsm8k": ("question", "answer"),
    "trl-lib/DeepMath-103K": ("prompt", "solution"),
}
FALLBACK = (
    "text",
    "prompt",
    "completion",
    "messages",
    "query",
    "question",
    "answer",
    "review",
    "chosen",
    "rejected",
    "label",
)
_LOCAL_BUILDERS = {"json", "csv", "parquet", "text", "arrow", "imagefolder", "audiofolder"}


def tiny_dataset(columns: tuple[str, ...], n: int = 256) -> Any:
    """`n` rows of the given columns, from the tiny grammar; `text`/`review` run past 200 chars."""
    from datasets import Dataset

    s = tiny.tiny_corpus(8 * n, seed=1)

    def value(col: str, i: int) -> Any:
        head, _, tail = s[i].partition(" ")
        if col in ("text", "review"):
            return " ".join(s[8 * i : 8 * i + 8])
        if col in ("prompt", "query", "question"):
            return head
        if col in ("completion", "answer", "solution", "response_j", "chosen"):
            return " " + tail
        if col in ("response_k", "rejected"):
            return " " + s[n + i].partition(" ")[2]
        if col == "messages":
            return [{"role": "user", "content": head}, {"role": "assistant", "content": tail}]
        if col == "label":
            return i % 2
        return s[i]

    return Dataset.from_dict({c: [value(c, i) for i in range(n)] for c in columns})


def _patch_datasets(datasets: Any) -> None:
    original = datasets.load_dataset
    _ORIGINAL["load_dataset"] = original

    class _AnySplit(datasets.DatasetDict):
        def __missing__(self, key: str) -> Any:
            return self["train"]

    def load_dataset(
        path: Any = None,
        name: Any = None,
        *args: Any,
        split: Any = None,
        streaming: bool = False,
        **kwargs: Any,
    ) -> Any:
        if path in _LOCAL_BUILDERS or _is_local(path):
            return original(path, name, *args, split=split, streaming=streaming, **kwargs)
        ds = tiny_dataset(DATASETS.get(path, FALLBACK))
        if split is not None:
            return ds.to_iterable_dataset() if streaming else ds
        out = _AnySplit({"train": ds, "test": ds.select(range(16))})
        return (
            datasets.IterableDatasetDict({k: v.to_iterable_dataset() for k, v in out.items()})
            if streaming
            else out
        )

    datasets.load_dataset = load_dataset
    select = datasets.Dataset.select

    def select_within(self: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
        """`ds.select(range(100_000))` on a stand-in of 256 rows takes the rows there are: scripts cut
        real datasets to a size, and the stand-in is smaller than any of them."""
        if isinstance(indices, range) and indices.step > 0 and indices.stop > len(self):
            indices = range(indices.start, min(indices.stop, len(self)), indices.step)
        return select(self, indices, *args, **kwargs)

    datasets.Dataset.select = select_within


# -- pipeline ---------------------------------------------------------------------------------


class TinyScorer:
    """A deterministic text classifier with `transformers.pipeline`'s call shapes (2 labels)."""

    labels = ("NEGATIVE", "POSITIVE")
    task = "text-classification"
    device = "cpu"

    def __init__(self) -> None:
        self.tokenizer = _shared_tokenizer()
        self.model = _ScorerModel(self.labels)

    def _logit(self, text: str) -> float:
        return (sum(map(ord, text)) % 97) / 48.0 - 1.0  # in [-1, 1]

    def __call__(
        self,
        inputs: Any,
        top_k: Any = 1,
        function_to_apply: str | None = None,
        return_all_scores: bool = False,
        **kwargs: Any,
    ) -> Any:
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        out = []
        for text in texts:
            x = self._logit(str(text))
            raw = (-x, x)
            if function_to_apply != "none":
                e = [math.exp(v) for v in raw]
                raw = (e[0] / sum(e), e[1] / sum(e))
            scores = [{"label": lab, "score": sc} for lab, sc in zip(self.labels, raw)]
            if top_k is None or return_all_scores:
                out.append(scores)
            else:
                best = sorted(scores, key=lambda d: -d["score"])[: int(top_k)]
                out.append(best[0] if top_k == 1 else best)
        return out


class _ScorerModel:
    """What scripts touch of `pipe.model`: its config (pad_token_id, labels), device, to(), eval()."""

    device = "cpu"

    def __init__(self, labels: tuple[str, ...]) -> None:
        from transformers import PretrainedConfig

        self.config = PretrainedConfig(
            id2label=dict(enumerate(labels)), label2id={v: i for i, v in enumerate(labels)}
        )
        self.config.pad_token_id = None  # transformers 5 configs no longer define it by default

    def to(self, *args: Any, **kwargs: Any) -> _ScorerModel:
        return self

    def eval(self) -> _ScorerModel:
        return self


def _patch_pipeline(module: Any) -> None:
    """`transformers.pipeline` (from transformers.pipelines): text classification is a TinyScorer."""
    original = module.pipeline

    def pipeline(task: Any = None, *args: Any, **kwargs: Any) -> Any:
        if task in ("sentiment-analysis", "text-classification"):
            return TinyScorer()
        return original(task, *args, **kwargs)

    module.pipeline = pipeline
    top = sys.modules.get("transformers")
    if top is not None and "pipeline" in vars(top):
        top.pipeline = pipeline


# -- training caps ----------------------------------------------------------------------------


def cap_args(args: Any, steps: int) -> None:
    """Make any TrainingArguments (GRPO/RLOO/SFT... configs) run `steps` small steps, here."""
    import torch

    def put(name: str, value: Any) -> None:
        if hasattr(args, name):
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
    if "bnb" in str(getattr(args, "optim", "")) or "8bit" in str(getattr(args, "optim", "")):
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
        if getattr(args, name, None):
            put(name, min(getattr(args, name), limit))


def _patch_training_args(module: Any, steps: int) -> None:
    ta = module.TrainingArguments
    post_init = ta.__post_init__

    def __post_init__(self):  # type: ignore[no-untyped-def]
        cap_args(self, steps)
        post_init(self)

    ta.__post_init__ = __post_init__


def _no_push(self: Any, *args: Any, **kwargs: Any) -> None:
    print("trl-migrate smoke: push_to_hub skipped", file=sys.stderr)


def _patch_trainer(module: Any, steps: int) -> None:
    trainer_init = module.Trainer.__init__

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        trainer_init(self, *args, **kwargs)
        self.args.max_steps = steps  # in case the script changed it after building the config
        TRAINERS.append(self)

    module.Trainer.__init__ = __init__
    module.Trainer.push_to_hub = _no_push


def _patch_hub(module: Any) -> None:
    module.PushToHubMixin.push_to_hub = _no_push


# -- network ----------------------------------------------------------------------------------

_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "", None}


def _patch_network() -> None:
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


def bootstrap(steps: int) -> None:
    """Block the network now; patch each module of transformers and datasets right after the
    script (or a library) imports it: nothing is imported early, so import order and cycles
    (peft <-> transformers) stay the script's own."""
    _patch_network()
    _stub_missing_trackers()
    hooks = {
        "transformers.training_args": lambda m: _patch_training_args(m, steps),
        "transformers.trainer": lambda m: _patch_trainer(m, steps),
        "transformers.utils.hub": _patch_hub,
        "transformers.modeling_utils": _patch_models,
        "transformers.tokenization_utils_base": _patch_tokenizers,
        "transformers.models.auto.modeling_auto": _patch_auto_classes,
        "transformers.models.auto.configuration_auto": _patch_auto_classes,
        "transformers.models.auto.tokenization_auto": _patch_auto_classes,
        "transformers.models.auto.processing_auto": _patch_auto_classes,
        "transformers.pipelines": _patch_pipeline,
        "datasets": _patch_datasets,
    }
    for name, hook in hooks.items():
        _after_import(name, hook)


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


def _stub_missing_trackers() -> None:
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
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        module.__getattr__ = lambda attr, _n=_NoOp(): _n.__getattr__(attr)  # type: ignore[method-assign]
        sys.modules[name] = module
        print(
            f"[trl-migrate smoke] {name} is not installed here: a no-op stand-in answers the script's {name} calls",
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


def _after_import(name: str, hook: Any) -> None:
    if name in sys.modules:
        hook(sys.modules[name])
    else:
        sys.meta_path.insert(0, _PostImportFinder(name, hook))


# -- run and report ---------------------------------------------------------------------------


def _trainer_report(trainer: Any) -> dict[str, Any]:
    history = list(getattr(trainer.state, "log_history", []) or [])
    losses = [float(h["loss"]) for h in history if "loss" in h]
    return {
        "class": type(trainer).__name__,
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
        if isinstance(e, NetworkBlockedError) or name in (
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
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:],
    }
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


def run(script: str, args: list[str], *, steps: int) -> dict[str, Any]:
    """Bootstrap, run `script` as __main__ with `args`, and return the outcome as a dict."""
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
    result["bootstrap_seconds"] = round(time.perf_counter() - started, 3)
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    _release_our_packages()
    try:
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
    result["trainers"] = [_trainer_report(t) for t in TRAINERS]
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


_OURS = ("migrate", "codemods", "compat")


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
    steps = int(os.environ.get(STEPS_ENV, "2"))
    result = run(os.path.abspath(script), args, steps=steps)
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
