"""The smoke harness's stand-ins for what a script downloads: tiny models and the shared tokenizer
saved under the run's folder, `from_pretrained` of the Auto classes mapped to them, small
in-memory datasets for `load_dataset`, and a tiny deterministic scorer for `pipeline(...)`."""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
from typing import Any

# Imported now, and used through this name only: before the user's script runs, our packages
# leave sys.modules (harness._release_our_packages), so a repo's own `migrate` or `compat`
# module imports as the repo's. tiny imports torch and transformers only inside its functions.
from migrate.reference import caps, tiny

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


STORE_ENV = "TRL_MIGRATE_SMOKE_STORE"  # where the tiny models are saved (default: ./tiny-models)


MODEL_VOCAB = 512  # larger than the tokenizer's ~380 tokens, so scripts may add a few tokens


_ORIGINAL: dict[str, Any] = {}


_tokenizer: Any = None


def _shared_tokenizer() -> Any:
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = tiny.tiny_tokenizer()
    return _tokenizer


# Model ids whose family shapes the module names a script's LoRA config targets: the tiny
# causal LM for them has that family's layout (first match wins; the rest get Qwen3's).
FAMILIES = (
    (("gpt2", "gpt-2"), "gpt2"),
    (("bloom",), "bloom"),
    (("pythia", "gpt-neox", "gpt_neox"), "gpt_neox"),
)


def family(name_or_path: Any) -> str:
    """The tiny causal LM's arch for a model id (`lvwerra/gpt2-imdb` -> gpt2)."""
    text = str(name_or_path or "").lower()
    return next((arch for keys, arch in FAMILIES if any(k in text for k in keys)), "qwen3")


def _causal(name_or_path: Any) -> str:
    arch = family(name_or_path)
    return "causal" if arch == "qwen3" else f"causal-{arch}"


def _seqcls(name_or_path: Any) -> str:
    """A classifier (reward model) of the id's family: `model.config.n_positions` of a GPT-2
    reward model reads as it did (doelleb/guard-fair-rlhf's `erwanf/gpt2-mini`)."""
    arch = family(name_or_path)
    return "seqcls" if arch == "qwen3" else f"seqcls-{arch}"


def tiny_dir(kind: str, num_labels: int = 1) -> str:
    """A folder with a tiny `kind` model (causal, causal-gpt2, ..., seqcls, seqcls-gpt2, ...,
    seq2seq) and the shared tokenizer."""
    store = os.environ.get(STORE_ENV) or os.path.abspath("tiny-models")
    name = f"{kind}-{num_labels}" if kind.startswith("seqcls") else kind
    path = os.path.join(store, name)
    if os.path.exists(os.path.join(path, "config.json")):
        return path
    if kind.startswith("causal-"):
        model = tiny.tiny_causal_lm(kind.partition("-")[2], vocab_size=MODEL_VOCAB)  # type: ignore[arg-type]
    elif kind == "causal":
        model = tiny.tiny_causal_lm(vocab_size=MODEL_VOCAB)
    elif kind == "seqcls":
        model = tiny.tiny_seq_classifier(num_labels, vocab_size=MODEL_VOCAB)
    elif kind.startswith("seqcls-"):
        arch = kind.partition("-")[2]
        model = tiny.tiny_seq_classifier(num_labels, arch=arch, vocab_size=MODEL_VOCAB)  # type: ignore[arg-type]
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

    config = T5Config(  # type: ignore[call-arg]  # it takes **kwargs it does not declare
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


_CHECKPOINT_FILE = re.compile(
    r"(config|adapter_config|tokenizer_config|tokenizer|generation_config|special_tokens_map)\.json"
    r"|vocab\.\w+|merges\.txt|.+\.(safetensors|bin|pt|pth|model|gguf)"
)


def _is_checkpoint(name: Any) -> bool:
    """Whether `from_pretrained(name)` loads a checkpoint of this machine (so it is not stood in
    for). A folder that holds none of a checkpoint's files is a placeholder the repo committed
    for the user to fill (`reward_model/sample_model`): it is stood in for like a hub id."""
    if not _is_local(name):
        return False
    if not isinstance(name, (str, os.PathLike)) or not os.path.isdir(name):
        return True
    path = str(os.fspath(name))
    with os.scandir(path) as entries:
        if any(e.is_dir() or _CHECKPOINT_FILE.fullmatch(e.name) for e in entries):
            return True
    said_once(
        PLACEHOLDERS,
        path,
        f"{path} holds no checkpoint (no config, tokenizer or weights): a tiny stand-in is "
        "loaded for it",
    )
    return False


def said_once(seen: list[Any], key: Any, message: str) -> None:
    """Record `key` in `seen` (what the report lists) and say `message` in the log, once."""
    if key not in seen:
        seen.append(key)
        print(f"[trl-migrate smoke] {message}", file=sys.stderr)


PLACEHOLDERS: list[str] = []  # checkpoint folders of the repo that hold no checkpoint


_REWARD_NAME = re.compile(r"reward|(?<![a-z])rm(?![a-z])")


def _labels(name: Any, kwargs: dict[str, Any]) -> int:
    """How many labels the stand-in for a sequence classifier has: the script's `num_labels`,
    else 1 for a reward model (its name says `reward` or `rm`), else 2, transformers' own default
    for a classification config (a detector or sentiment classifier read as `logits[0][1]`)."""
    if "num_labels" in kwargs:
        return int(kwargs["num_labels"])
    return 1 if _REWARD_NAME.search(os.fspath(name).lower()) else 2


def _gpu_device(device: Any) -> bool:
    """`0`, `"cuda"`, `"cuda:1"`, `torch.device("cuda")`: a GPU of a `device_map`."""
    if isinstance(device, bool):
        return False
    return isinstance(device, int) or caps._is_cuda(device)


def _on_this_machine(kwargs: dict[str, Any], where: str = "from_pretrained") -> dict[str, Any]:
    """`kwargs` of a checkpoint's `from_pretrained` with a `device_map` that places it on a GPU
    (`{"": 0}`, `"cuda:0"`, `{"": Accelerator().local_process_index}`) set to the CPU, and an
    8/4-bit quantization (`quantization_config=BitsAndBytesConfig(...)`, `load_in_4bit=True`)
    dropped, where this machine has no GPU, each override listed; transformers would stop on
    them ("Cannot access accelerator device when none is available", "Using `bitsandbytes`
    4-bit quantization requires bitsandbytes")."""
    device_map = kwargs.get("device_map")
    placed = device_map.values() if isinstance(device_map, dict) else [device_map]
    on_gpu = device_map is not None and any(_gpu_device(d) for d in placed)
    quantized = [k for k in _QUANTIZING if kwargs.get(k) not in (None, False)]
    if not on_gpu and not quantized:
        return kwargs
    import torch

    if torch.cuda.is_available():
        return kwargs
    kwargs = dict(kwargs)
    if on_gpu:
        caps.note(where, "device_map", device_map, "cpu")
        kwargs["device_map"] = "cpu"
    for key in quantized:
        # bitsandbytes quantizes on a GPU only: the checkpoint loads unquantized, as the tiny
        # stand-ins do
        value = kwargs.pop(key)
        caps.note(where, key, type(value).__name__ if key == "quantization_config" else value, None)
    return kwargs


# what quantizes a load in 8/4 bits (bitsandbytes, a GPU library)
_QUANTIZING = ("quantization_config", "load_in_8bit", "load_in_4bit")
# the attribute a model loaded without the 8/4-bit quantization its load asked for carries
QUANTIZED_MARK = "_trl_migrate_quantized"


def _asked_quantized(kwargs: dict[str, Any]) -> list[str]:
    quantized = [k for k in _QUANTIZING if kwargs.get(k) not in (None, False)]
    config = kwargs.get("quantization_config")
    if config is not None and not (
        getattr(config, "load_in_4bit", True) or getattr(config, "load_in_8bit", True)
    ):
        quantized.remove("quantization_config")  # a BitsAndBytesConfig that quantizes nothing
    return quantized


def _note_quantized(kwargs: dict[str, Any], where: str = "from_pretrained") -> None:
    """A stood-in load's 8/4-bit quantization, listed among the overrides."""
    for key in _asked_quantized(kwargs):
        value = kwargs[key]
        caps.note(where, key, type(value).__name__ if key == "quantization_config" else value, None)


def _quantized(model: Any, kwargs: dict[str, Any]) -> Any:
    """`model`, marked when its load asked for an 8/4-bit quantization this run left out: a
    trainer handed it with no adapter would refuse it at real scale (caps.patch_trainer)."""
    if _asked_quantized(kwargs):
        with contextlib.suppress(AttributeError, TypeError):  # an object that takes none
            setattr(model, QUANTIZED_MARK, True)
    return model


def patch_auto_classes(module: Any) -> None:
    """The Auto classes defined in `module` (one of transformers.models.auto.*)."""
    for name, kind in _AUTO_KINDS.items():
        cls = module.__dict__.get(name)
        if cls is None:
            continue
        original = cls.from_pretrained.__func__

        def from_pretrained(cls, name_or_path, *args, _original=original, _kind=kind, **kwargs):  # type: ignore[no-untyped-def]
            name_or_path = caps.hosted(name_or_path)  # saved under a hosted folder
            if _is_checkpoint(name_or_path):
                model = _original(cls, name_or_path, *args, **_on_this_machine(kwargs))
                return _quantized(model, kwargs)
            if _kind == "tokenizer":
                kept = {k: v for k, v in kwargs.items() if k in _TOKENIZER_KWARGS}
                return _original(cls, tiny_dir("causal"), **kept)
            if _kind == "seqcls":
                return _original(
                    cls, tiny_dir(_seqcls(name_or_path), _labels(name_or_path, kwargs))
                )
            # dtype, device_map, quantization_config, attn_implementation, revision, token...
            # describe the real checkpoint: the tiny model loads in float32 on the CPU (an 8/4-bit
            # quantization is listed among the overrides, and remembered on the model)
            _note_quantized(kwargs)
            model = _original(cls, tiny_dir(_causal(name_or_path) if _kind == "causal" else _kind))
            return _quantized(model, kwargs)

        cls.from_pretrained = classmethod(from_pretrained)


def patch_generation_config(module: Any) -> None:
    """`GenerationConfig.from_pretrained(id)`: the tiny causal model's generation settings (its
    special tokens), as the stand-in model is what generates."""
    cls = module.GenerationConfig
    original = cls.from_pretrained.__func__

    def from_pretrained(cls, name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_checkpoint(name_or_path):
            return original(cls, name_or_path, *args, **kwargs)
        from transformers import AutoConfig

        return cls.from_model_config(AutoConfig.from_pretrained(tiny_dir("causal")))

    cls.from_pretrained = classmethod(from_pretrained)


def patch_models(module: Any) -> None:
    """`Qwen3ForCausalLM.from_pretrained(id)` and the like (TRL's `create_model_from_path` loads
    models this way): the tiny stand-in of the same kind, through the Auto classes."""
    import transformers

    PreTrainedModel = module.PreTrainedModel
    model_original = PreTrainedModel.from_pretrained.__func__

    def model_from_pretrained(cls, name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        name_or_path = caps.hosted(name_or_path)  # saved under a hosted folder
        if _is_checkpoint(name_or_path):
            return model_original(cls, name_or_path, *args, **_on_this_machine(kwargs))
        name = cls.__name__
        if "SequenceClassification" in name:
            model_type = getattr(getattr(cls, "config_class", None), "model_type", "")
            return transformers.AutoModelForSequenceClassification.from_pretrained(
                tiny_dir(_seqcls(model_type or name_or_path), _labels(name_or_path, kwargs))
            )
        if (
            getattr(getattr(cls, "config_class", None), "is_encoder_decoder", False)
            or "Seq2Seq" in name
        ):
            return transformers.AutoModelForSeq2SeqLM.from_pretrained(tiny_dir("seq2seq"))
        model_type = getattr(getattr(cls, "config_class", None), "model_type", "")
        return transformers.AutoModelForCausalLM.from_pretrained(
            tiny_dir(_causal(model_type or name_or_path))
        )

    PreTrainedModel.from_pretrained = classmethod(model_from_pretrained)
    _save_without_push(PreTrainedModel)


_ADAPTERS: dict[str, str] = {}  # hub id of an adapter -> the tiny one saved in its place


def tiny_adapter_dir(model: Any, adapter_id: Any, task_type: str) -> str:
    """A tiny LoRA adapter (`SEQ_CLS`: with the `score` head of `model` where it is a classifier,
    else a 2-label one, as TRL's reward adapters have) for the architecture of `model` (a
    PeftModel or a plain model), saved once per hub id and head."""
    key = f"{task_type}:{getattr(model.config, 'num_labels', '')}:{adapter_id}"
    if key in _ADAPTERS:
        return _ADAPTERS[key]
    import copy

    import torch
    import transformers
    from peft import LoraConfig, get_peft_model

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = copy.deepcopy(base.config)
    if task_type == "CAUSAL_LM" and getattr(config, "is_encoder_decoder", False):
        task_type = "SEQ_2_SEQ_LM"  # an adapter for a T5 policy is a seq2seq one
    targets = None
    for existing in (getattr(model, "peft_config", None) or {}).values():
        targets = getattr(existing, "target_modules", None) or targets
    torch.manual_seed(0)
    if task_type == "SEQ_CLS":
        # a classifier's own labels (a reward model's 1), else the 2 of TRL's reward adapters
        if not type(base).__name__.endswith("ForSequenceClassification"):
            config.num_labels = 2
        built = transformers.AutoModelForSequenceClassification.from_config(config)
    elif task_type == "SEQ_2_SEQ_LM":
        built = transformers.AutoModelForSeq2SeqLM.from_config(config)
    else:
        built = transformers.AutoModelForCausalLM.from_config(config)
    lora = LoraConfig(task_type=task_type, r=4, lora_alpha=8, target_modules=targets)
    store = os.environ.get(STORE_ENV) or os.path.abspath("tiny-models")
    path = os.path.join(store, f"adapter-{task_type.lower()}-{len(_ADAPTERS)}")
    get_peft_model(built, lora).save_pretrained(path)
    _ADAPTERS[key] = path
    _ADAPTERS[str(adapter_id)] = path
    return path


def patch_peft(module: Any) -> None:
    """`PeftModel.from_pretrained(model, id)` and `model.load_adapter(id, ...)` of a hub id: a
    tiny adapter for the model's own architecture (a reward adapter, `SEQ_CLS`, when loaded
    beside the policy's); `load_peft_weights(id)` then reads the same tiny adapter."""
    PeftModel = module.PeftModel
    load_adapter = PeftModel.load_adapter
    from_pretrained = PeftModel.from_pretrained.__func__

    def load_adapter_or_stand_in(self, model_id, adapter_name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not _is_checkpoint(model_id):
            model_id = tiny_adapter_dir(self, model_id, "SEQ_CLS")
        try:
            return load_adapter(self, model_id, adapter_name, *args, **kwargs)
        except RuntimeError as e:
            # the repo's adapter, made for the real model: peft added it with the repo's own
            # config (rank, targets, task) before its weights failed to fit, so it stays, as
            # freshly made (LoRA starts as the identity)
            if not (_misfit(e, model_id) and adapter_name in self.peft_config):
                raise
            from torch.nn.modules.module import _IncompatibleKeys

            return _IncompatibleKeys(missing_keys=[], unexpected_keys=[])

    def from_pretrained_or_stand_in(cls, model, model_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        model_id = caps.hosted(model_id)
        # the task of the model it goes on: a reward classifier's adapter is SEQ_CLS
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        task = (
            "SEQ_CLS" if type(base).__name__.endswith("ForSequenceClassification") else "CAUSAL_LM"
        )
        if not _is_checkpoint(model_id):
            model_id = tiny_adapter_dir(model, model_id, task)
        return from_pretrained(cls, model, model_id, *args, **kwargs)

    PeftModel.load_adapter = load_adapter_or_stand_in
    PeftModel.from_pretrained = classmethod(from_pretrained_or_stand_in)
    _save_without_push(PeftModel)


MISFIT_ADAPTERS: list[str] = []  # the repo's adapters, made for the real model's sizes


def _misfit(error: RuntimeError, model_id: Any) -> bool:
    """Whether loading the repo's own adapter onto the tiny stand-in model failed on its sizes
    (`size mismatch for ...lora_A.weight`: a LoRA trained on the real checkpoint); it is then
    noted, and its weights left freshly made."""
    if "size mismatch" not in str(error):
        return False
    path = str(model_id)
    said_once(
        MISFIT_ADAPTERS,
        path,
        f"the adapter at {path} was made for the real base model, not the tiny stand-in: its "
        "config is kept, its weights freshly made",
    )
    return True


def patch_peft_config(module: Any) -> None:
    """`PeftConfig.from_pretrained(id)` (LoraConfig's too) of an adapter that is not on disk:
    the stand-in adapter's config where one was made for that id, else a LoRA config whose
    `base_model_name_or_path` is the id itself, so the common `config =
    PeftConfig.from_pretrained(adapter)`, `AutoModel...from_pretrained(
    config.base_model_name_or_path)`, `PeftModel.from_pretrained(base, adapter)` loads the
    tiny stand-ins all through."""
    mixin = module.PeftConfigMixin
    original = mixin.from_pretrained.__func__

    def from_pretrained_or_stand_in(cls, pretrained_model_name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        name = pretrained_model_name_or_path
        if _is_checkpoint(name) or kwargs.get("subfolder") or args:
            return original(cls, name, *args, **kwargs)
        if str(name) in _ADAPTERS:
            return original(cls, _ADAPTERS[str(name)], **kwargs)
        from peft import LoraConfig

        return LoraConfig(r=4, lora_alpha=8, base_model_name_or_path=str(name))

    mixin.from_pretrained = classmethod(from_pretrained_or_stand_in)


def patch_peft_weights(module: Any) -> None:
    """`load_peft_weights(id)` of a hub id a stand-in adapter took the place of."""
    original = module.load_peft_weights

    def load_peft_weights(model_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        return original(_ADAPTERS.get(str(model_id), model_id), *args, **kwargs)

    module.load_peft_weights = load_peft_weights
    saving = sys.modules.get("peft.utils.save_and_load")
    if saving is not None and saving is not module:
        setattr(saving, "load_peft_weights", load_peft_weights)  # noqa: B010


def patch_tokenizers(module: Any) -> None:
    """`GPT2Tokenizer.from_pretrained(id)` and the like: the shared tiny tokenizer."""
    import transformers

    base = module.PreTrainedTokenizerBase
    tok_original = base.from_pretrained.__func__

    def tok_from_pretrained(cls, name_or_path, *args, **kwargs):  # type: ignore[no-untyped-def]
        name_or_path = caps.hosted(name_or_path)  # saved under a hosted folder
        if _is_checkpoint(name_or_path):
            return tok_original(cls, name_or_path, *args, **kwargs)
        kept = {k: v for k, v in kwargs.items() if k in _TOKENIZER_KWARGS}
        return transformers.AutoTokenizer.from_pretrained(tiny_dir("causal"), **kept)

    base.from_pretrained = classmethod(tok_from_pretrained)
    _save_without_push(base)
    call = base.__call__

    def call_on_stand_in_rows(self, text=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        # a stand-in row's number (`label` 0 or 1) where the data the repo lacks held text (a
        # summary): the real rows would have been tokenized
        if MISSING_DATA and isinstance(text, (int, float)) and not isinstance(text, bool):
            text = str(text)
        return call(self, text, *args, **kwargs)

    base.__call__ = call_on_stand_in_rows


def _save_without_push(cls: Any) -> None:
    """`save_pretrained(dir, push_to_hub=True)` saves, and skips the upload (offline); a folder
    under a hosted notebook's working folder is the run's own (`caps.hosted`)."""
    save = cls.save_pretrained

    def save_pretrained(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("push_to_hub"):
            kwargs["push_to_hub"] = False
            print("trl-migrate smoke: push_to_hub skipped", file=sys.stderr)
        # a hosted notebook's folder (`/content/drive/...`): under the run's folder, where
        # safetensors and tokenizers, which write outside Python, write too
        if args:
            args = (caps.hosted(args[0], write=True), *args[1:])
        elif "save_directory" in kwargs:
            kwargs["save_directory"] = caps.hosted(kwargs["save_directory"], write=True)
        return save(self, *args, **kwargs)

    cls.save_pretrained = save_pretrained


# Columns the scripts we know read, per dataset id; anything else gets FALLBACK.
DATASETS: dict[str, tuple[str, ...]] = {
    "stanfordnlp/imdb": ("text", "label"),
    "imdb": ("text", "label"),
    "trl-internal-testing/descriptiveness-sentiment-trl-style": ("prompt", "chosen", "rejected"),
    "trl-internal-testing/tldr-preference-sft-trl-style": ("prompt", "completion", "messages"),
    "trl-lib/tldr": ("prompt", "completion"),
    # ":messages": the column holds a conversation (a list of {"role", "content"} turns), as in
    # the real dataset; scripts read it as `row["chosen"][-1]["content"]`.
    "trl-lib/ultrafeedback_binarized": (
        "chosen:messages",
        "rejected:messages",
        "score_chosen",
        "score_rejected",
    ),
    "HuggingFaceH4/ultrafeedback_binarized": (
        "prompt",
        "prompt_id",
        "chosen:messages",
        "rejected:messages",
        "messages",
        "score_chosen",
        "score_rejected",
    ),
    "HuggingFaceH4/ultrachat_200k": ("prompt", "prompt_id", "messages"),
    "trl-internal-testing/hh-rlhf-trl-style": ("prompt", "chosen:messages", "rejected:messages"),
    # ":dialogue": one text of "\n\nHuman: ...\n\nAssistant: ..." turns, hh-rlhf's own format
    # (scripts split the prompt off at the last "\n\nAssistant:").
    "Anthropic/hh-rlhf": ("chosen:dialogue", "rejected:dialogue"),
    # ":count": a positive whole number (upvotes; scripts divide one score by another)
    "stanfordnlp/SHP": (
        "post_id",
        "domain",
        "upvote_ratio",
        "history",
        "human_ref_A",
        "human_ref_B",
        "labels",
        "score_A:count",
        "score_B:count",
        "score_ratio",
    ),
    "lvwerra/stack-exchange-paired": ("question", "response_j", "response_k"),
    # AimeeAyat/ATML-PA5 picks its prompt column by name ("question" here) and renames it
    "Intel/orca_dpo_pairs": ("system", "question", "chosen", "rejected"),
    # ":gsm8k": worked steps with `<<a+b=c>>` calculator marks and the final `#### c` line,
    # which reward functions split on (rcalix1/TransferLearning's `answer.split('####')[1]`)
    "openai/gsm8k": ("question", "answer:gsm8k"),
    "gsm8k": ("question", "answer:gsm8k"),
    "trl-lib/DeepMath-103K": ("prompt", "solution"),
    # ":scored": a span of text with the Perspective API's scores (0.0 .. 1.0), read as
    # `sample["prompt"]["text"]` and filtered on `sample["prompt"]["toxicity"] > 0.3`
    "allenai/real-toxicity-prompts": (
        "filename",
        "begin:count",
        "end:count",
        "challenging",
        "prompt:scored",
        "continuation:scored",
    ),
    # ":long": 8, 16 or 24 sentences, as `text` holds (scripts keep rows with
    # `200 < len(x["prompt"]) <= 1000`: Reddit posts, dialogues); ":text": text where the name
    # alone reads as a number (the summary in `label`)
    "CarperAI/openai_summarize_tldr": ("prompt:long", "label:text"),
    "knkarthick/dialogsum": ("id", "dialogue:long", "summary", "topic"),
    # ":argilla": an Argilla record, read as `row["new-instruction"]["value"][0]`
    "argilla/databricks-dolly-15k-curated-en": (
        "id",
        "category",
        "original-instruction",
        "original-context",
        "original-response",
        "new-instruction:argilla",
        "new-context:argilla",
        "new-response:argilla",
    ),
}


# the Perspective API's scores of a span of allenai/real-toxicity-prompts
_PERSPECTIVE = (
    "toxicity",
    "severe_toxicity",
    "identity_attack",
    "insult",
    "threat",
    "profanity",
    "sexually_explicit",
    "flirtation",
)


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


COLUMNS_ENV = "TRL_MIGRATE_SMOKE_COLUMNS"  # string keys the script's files read (smoke side)
_SPLITS = frozenset({"train", "test", "validation", "valid", "eval", "dev"})
# read as numbers: stand-in rows hold 0.0 .. 1.0
_NUMBERS = ("score", "reward", "rating", "length")


def fallback_columns() -> tuple[str, ...]:
    """FALLBACK's columns, then every key the script's files read by subscript (COLUMNS_ENV):
    a script that reads `example["instruction"]` from data this machine lacks finds it in the
    stand-in rows (as text; numbers for score-like names)."""
    keys = [k for k in os.environ.get(COLUMNS_ENV, "").split(",") if k and k not in _SPLITS]
    return FALLBACK + tuple(k for k in keys if k not in FALLBACK)[:64]


# DatasetDict methods that answer another DatasetDict of the same splits
_SPLIT_METHODS = (
    "map",
    "filter",
    "remove_columns",
    "rename_column",
    "rename_columns",
    "select_columns",
    "cast",
    "cast_column",
    "flatten",
    "shuffle",
    "sort",
    "with_format",
    "flatten_indices",
)


_LOCAL_BUILDERS = {"json", "csv", "parquet", "text", "arrow", "imagefolder", "audiofolder"}


MISSING_DATA: list[str] = []  # data files and folders the script named that are not there
# (missing data file, the repo's sample of it read in its place)
SAMPLE_DATA: list[tuple[str, str]] = []


def _absent_files(data_files: Any) -> list[str]:
    """The local data files of `data_files` (a path, a list, or a split -> path(s) mapping)
    that do not exist or are empty; [] when all hold data or none is named."""
    if data_files is None:
        return []
    if not isinstance(data_files, (str, os.PathLike, dict, list, tuple)):
        # `data_files=args.train_path` left at a default such as True: no file is named
        return [f"(data_files={data_files!r}: no file named)"]
    if not isinstance(data_files, (str, os.PathLike)) and not data_files:
        # `data_files={}` or `[]`: the folder the script globbed for data holds none here.
        return ["(no data files: the script found none to pass)"]
    if isinstance(data_files, (str, os.PathLike)):
        items = [os.fspath(data_files)]
    elif isinstance(data_files, dict):
        items = [
            p
            for v in data_files.values()
            for p in ([v] if isinstance(v, (str, os.PathLike)) else _paths(v))
        ]
    else:
        items = list(data_files)
    named = [os.fspath(p) for p in items if isinstance(p, (str, os.PathLike))]
    if len(named) < len(items):
        return [f"(data_files={data_files!r}: no file named)"]
    items = named
    import glob

    def there(pattern: str) -> bool:
        return any(_holds_data(p) for p in glob.glob(pattern) if os.path.isfile(p))

    return [p for p in items if "://" not in p and not there(p)]


def _paths(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def sibling_data(path: str) -> str | None:
    """The one file beside a missing data file that holds data of its kind, named alike
    (`ppo_data_example.json` for `ppo_data_train.json`: the sample a repo ships in place of its
    real data), else None."""
    folder, name = os.path.split(path)
    stem, ext = os.path.splitext(name)
    cut = max(stem.rfind("_"), stem.rfind("-"))
    if not ext or cut <= 0 or "*" in name:
        return None
    try:
        names = sorted(os.listdir(folder or "."))
    except OSError:
        return None
    found = [
        os.path.join(folder, n)
        for n in names
        if n != name
        and n.startswith(stem[: cut + 1])
        and n.endswith(ext)
        and os.path.isfile(os.path.join(folder, n))
        and _holds_data(os.path.join(folder, n))
    ]
    return found[0] if len(found) == 1 else None


def _in_place(data_files: Any, swap: dict[str, str]) -> Any:
    """`data_files` with each missing file replaced by its sibling of `swap`."""
    if isinstance(data_files, (str, os.PathLike)):
        return swap.get(os.fspath(data_files), data_files)
    if isinstance(data_files, dict):
        return {k: _in_place(v, swap) for k, v in data_files.items()}
    return [_in_place(p, swap) for p in data_files]


def _holds_data(path: str) -> bool:
    """False for a placeholder: an empty file, or one of only blank lines (a repo's
    `data/sample.json` committed as a lone newline holds no rows either)."""
    with open(path, "rb") as f:
        return bool(f.read(4096).strip())


def _looks_like_path(name: str) -> bool:
    """`data/my_dataset`, `./x`, `/abs/x`: a local folder name that is not there (a hub id has
    exactly one slash and no leading dot or slash)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1


def _note_data(paths: list[str]) -> None:
    for path in paths:
        said_once(MISSING_DATA, path, f"{path} is not in the repo: stand-in rows are used for it")


def tiny_dataset(columns: tuple[str, ...], n: int = 256) -> Any:
    """`n` rows of the given columns, from the tiny grammar. `text`/`review` hold 8, 16 or 24
    sentences in turn (about 280, 560 and 840 characters), so the length filters scripts put on
    real reviews (`len(x["review"]) > 200`, `500 < len(...) <= 1000`) keep some of them. A
    column named `chosen:messages` (or `chosen:dialogue`) is the conversation, user turn then the
    text the column would hold, as a list of turns (or one hh-rlhf text) where the dataset of
    DATASETS it comes from holds one."""
    from datasets import Dataset

    s = tiny.tiny_corpus(24 * n + 24, seed=1)
    kinds = dict(c.partition(":")[::2] for c in columns)
    columns = tuple(kinds)

    def value(col: str, i: int) -> Any:
        # a conversation: the prompt's turn, then the answer the column holds as text
        prompt, answer = s[i].partition(" ")[0], str(text(col, i)).strip()
        if kinds[col] == "messages":
            return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
        if kinds[col] == "dialogue":
            return f"\n\nHuman: {prompt}\n\nAssistant: {answer}"
        if kinds[col] == "count":
            return 1 + (i * (1 + sum(map(ord, col)) % 5)) % 7
        if kinds[col] == "scored":
            words = s[i].split(" ")
            half = len(words) // 2
            span = " ".join(words[:half] if col == "prompt" else words[half:])
            return {"text": span, **{k: ((i + j) % 5) / 4 for j, k in enumerate(_PERSPECTIVE)}}
        if kinds[col] == "long":
            return text("text", i)
        if kinds[col] == "gsm8k":
            a, b = 2 + i % 17, 3 + i % 11
            return f"{answer} {a} + {b} = <<{a}+{b}={a + b}>>{a + b}.\n#### {a + b}"
        if kinds[col] == "text":
            return s[i]
        if kinds[col] == "argilla":
            return {"user_id": ["stand-in"], "value": [answer], "status": ["submitted"]}
        if col == "challenging":
            return i % 3 == 0
        if col == "filename":
            return f"stand-in-{i:04d}.txt"
        return text(col, i)

    def text(col: str, i: int) -> Any:
        head, _, tail = s[i].partition(" ")
        if col in ("text", "review", "dialogue"):
            return " ".join(s[24 * i : 24 * i + 8 * (1 + i % 3)])
        if col in ("prompt", "query", "question"):
            return head
        if col in ("completion", "answer", "solution", "response_j", "chosen"):
            return " " + tail
        if col in ("response_k", "rejected"):
            return " " + s[n + i].partition(" ")[2]
        if col == "messages":
            return [{"role": "user", "content": head}, {"role": "assistant", "content": tail}]
        if col in ("label", "labels"):
            return i % 2
        if any(word in col.lower() for word in _NUMBERS):
            return (i % 5) / 4
        return s[i]

    from datasets import DatasetInfo

    rows = {c: [value(c, i) for i in range(n)] for c in columns}
    return Dataset.from_dict(rows, info=DatasetInfo(description=STAND_IN))


STAND_IN = "trl-migrate smoke stand-in rows"  # the description that marks our datasets


def _is_stand_in(ds: Any) -> bool:
    return getattr(getattr(ds, "info", None), "description", None) == STAND_IN


def _as_text(ds: Any, name: str) -> Any:
    """`ds` with a column `name` of text, for a column the script's real data had."""
    source = next((c for c in ("text", "prompt", "query") if c in ds.column_names), None)
    values = ds[source] if source else [f"row {i}" for i in range(len(ds))]
    return ds.add_column(name, list(values))


def _tolerant_columns(datasets: Any) -> None:
    """Column operations a script makes on its real dataset (rename `document` to `query`,
    drop `title`, ...) succeed on the stand-in rows: a missing source column is made of text,
    a clashing target is replaced, a missing column to drop is ignored. Real datasets keep
    every check."""
    Dataset = datasets.Dataset
    rename, remove, select, mapper = (
        Dataset.rename_column,
        Dataset.remove_columns,
        Dataset.select_columns,
        Dataset.map,
    )

    def rename_column(self, original_column_name, new_column_name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_stand_in(self) and original_column_name != new_column_name:
            if new_column_name in self.column_names:
                self = remove(self, [new_column_name])
            if original_column_name not in self.column_names:
                return _as_text(self, new_column_name)
        return rename(self, original_column_name, new_column_name, *args, **kwargs)

    def rename_columns(self, column_mapping, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not _is_stand_in(self):
            return renames(self, column_mapping, *args, **kwargs)
        for old, new in column_mapping.items():
            self = rename_column(self, old, new)
        return self

    def remove_columns(self, column_names, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_stand_in(self):
            names = [column_names] if isinstance(column_names, str) else list(column_names)
            column_names = [c for c in names if c in self.column_names]
        return remove(self, column_names, *args, **kwargs)

    def select_columns(self, column_names, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _is_stand_in(self):
            names = [column_names] if isinstance(column_names, str) else list(column_names)
            for name in names:
                if name not in self.column_names:
                    self = _as_text(self, name)
        return select(self, column_names, *args, **kwargs)

    def map(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        drop = kwargs.get("remove_columns")
        if _is_stand_in(self) and drop is not None:
            names = [drop] if isinstance(drop, str) else list(drop)
            kwargs["remove_columns"] = [c for c in names if c in self.column_names]
        return mapper(self, *args, **kwargs)

    renames = Dataset.rename_columns
    Dataset.rename_column = rename_column
    Dataset.rename_columns = rename_columns
    Dataset.remove_columns = remove_columns
    Dataset.select_columns = select_columns
    Dataset.map = map


def patch_datasets(datasets: Any) -> None:
    original = datasets.load_dataset
    _ORIGINAL["load_dataset"] = original

    class _AnySplit(datasets.DatasetDict):
        rows: Any = None  # the stand-in rows: a split the script never set holds them

        def __missing__(self, key: str) -> Any:
            # not `self["train"]`, which the script may have replaced by its processed rows
            return self["train"] if self.rows is None else self.rows

    def _keeps_any_split(name: str) -> None:
        # DatasetDict's own methods answer a plain DatasetDict: the splits still stand in for
        # every name (`tokenized["validation"]` after `.map(...)`), processed alike
        method = getattr(datasets.DatasetDict, name)

        def kept(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = method(self, *args, **kwargs)
            if type(out) is not datasets.DatasetDict:
                return out
            wrapped = _AnySplit(out)
            wrapped.rows = out.get("train")
            return wrapped

        setattr(_AnySplit, name, kept)

    for method_name in _SPLIT_METHODS:
        if hasattr(datasets.DatasetDict, method_name):
            _keeps_any_split(method_name)

    def load_dataset(
        path: Any = None,
        name: Any = None,
        *args: Any,
        split: Any = None,
        streaming: bool = False,
        **kwargs: Any,
    ) -> Any:
        absent = _absent_files(kwargs.get("data_files", args[0] if args else None))
        swap = {p: s for p in absent if (s := sibling_data(p)) is not None}
        named = "data_files" in kwargs
        if path in _LOCAL_BUILDERS and absent and len(swap) == len(absent) and named:
            # the repo's sample of the same data, named alike, read in place of what it lacks
            for missing, sample in swap.items():
                said_once(
                    SAMPLE_DATA,
                    (missing, sample),
                    f"{missing} is not in the repo: its {sample} is read in its place",
                )
            kwargs["data_files"] = _in_place(kwargs["data_files"], swap)
            absent = []
        if path in _LOCAL_BUILDERS and not absent or _is_local(path):
            return original(path, name, *args, split=split, streaming=streaming, **kwargs)
        if path in _LOCAL_BUILDERS:  # the data files are not in the repo: stand-in rows
            _note_data(absent)
        elif isinstance(path, str) and _looks_like_path(path):
            _note_data([path])
        ds = tiny_dataset(DATASETS.get(path) or fallback_columns())
        if split is not None:
            return ds.to_iterable_dataset() if streaming else ds
        out = _AnySplit({"train": ds, "test": ds.select(range(16))})
        out.rows = ds
        return (
            datasets.IterableDatasetDict({k: v.to_iterable_dataset() for k, v in out.items()})
            if streaming
            else out
        )

    datasets.load_dataset = load_dataset
    load_from_disk = datasets.load_from_disk

    def load_from_disk_or_stand_in(dataset_path: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(dataset_path, (str, os.PathLike)) and not os.path.exists(dataset_path):
            _note_data([os.fspath(dataset_path)])
            ds = tiny_dataset(fallback_columns())
            return _AnySplit({"train": ds, "test": ds.select(range(16))})
        return load_from_disk(dataset_path, *args, **kwargs)

    datasets.load_from_disk = load_from_disk_or_stand_in
    select = datasets.Dataset.select

    def select_within(self: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
        """`ds.select(range(100_000))` on a stand-in of 256 rows takes the rows there are: scripts
        cut real datasets to a size, and the stand-in is smaller than any of them."""
        if isinstance(indices, range) and indices.step > 0 and indices.stop > len(self):
            indices = range(indices.start, min(indices.stop, len(self)), indices.step)
        return select(self, indices, *args, **kwargs)

    datasets.Dataset.select = select_within
    row = datasets.Dataset.__getitem__

    def row_within(self: Any, key: Any) -> Any:
        """`dataset[900]` (a script showing one example of the real dataset) on stand-in rows
        fewer than that: row 900 % 256, as `select_within` takes the rows there are."""
        if isinstance(key, int) and key >= len(self) > 0 and _is_stand_in(self):
            key %= len(self)
        return row(self, key)

    datasets.Dataset.__getitem__ = row_within
    _tolerant_columns(datasets)


# pandas' readers of a data file, and the keyword each takes the columns it keeps with
_PANDAS_READERS = {
    "read_csv": "usecols",
    "read_table": "usecols",
    "read_json": None,
    "read_parquet": "columns",
    "read_excel": "usecols",
}


_PANDAS_SOURCES = ("filepath_or_buffer", "path", "path_or_buf", "io")  # their first parameter


def _missing_path(source: Any) -> str | None:
    """`source` when it names a local file that is not there (or holds nothing); None for a
    file that holds data, a URL, a buffer or anything else pandas reads."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = os.fspath(source)
    if "://" in path or "\n" in path or path.lstrip().startswith(("{", "[")):
        return None  # a URL, or JSON text handed to read_json
    if os.path.isfile(path) and _holds_data(path):
        return None
    if os.path.isdir(path):  # a parquet dataset folder
        return None if any(os.scandir(path)) else path
    return path


def _stand_in_frame(kwargs: dict[str, Any], kept: str | None) -> Any:
    """Stand-in rows as a DataFrame: the columns a script names (`names=`, `usecols=`,
    `columns=`) where it names them as text, else FALLBACK's and the keys the script reads."""
    named = [
        c
        for key in ("names", kept)
        if key and isinstance(kwargs.get(key), (list, tuple))
        for c in kwargs[key]
        if isinstance(c, str)
    ]
    frame = tiny_dataset(tuple(dict.fromkeys(named)) or fallback_columns()).to_pandas()
    rows = kwargs.get("nrows")
    frame = frame.head(rows) if isinstance(rows, int) and rows >= 0 else frame
    frame.attrs[STAND_IN] = True  # pandas carries attrs on to the frames made from this one
    return frame


def patch_pandas(pandas: Any) -> None:
    """`pd.read_csv("/content/data.csv")` (read_json, read_parquet, read_excel, read_table) of a
    data file the repository does not hold returns stand-in rows, said as `load_dataset`'s are:
    a notebook that reads its Colab or Kaggle upload this way smoke-runs past that line. A
    reader asked for chunks (`chunksize=`, `iterator=`) keeps its error."""
    for name, kept in _PANDAS_READERS.items():
        original = getattr(pandas, name, None)
        if original is None:
            continue

        def reader(*args: Any, _original: Any = original, _kept: Any = kept, **kwargs: Any) -> Any:
            named = (kwargs[k] for k in _PANDAS_SOURCES if k in kwargs)
            source = args[0] if args else next(named, None)
            missing = _missing_path(source)
            if missing is None or kwargs.get("chunksize") or kwargs.get("iterator"):
                return _original(*args, **kwargs)
            _note_data([missing])
            return _stand_in_frame(kwargs, _kept)

        reader.__wrapped__ = original  # type: ignore[attr-defined]
        reader.__name__ = name
        setattr(pandas, name, reader)
    sample = pandas.DataFrame.sample

    def sample_within(self: Any, n: Any = None, *args: Any, **kwargs: Any) -> Any:
        """`df.sample(2142)` of stand-in rows takes the rows there are (as `select_within` does
        for datasets): the script sized the sample for its real data."""
        if (
            self.attrs.get(STAND_IN)
            and isinstance(n, int)
            and n > len(self)
            and not kwargs.get("replace")
        ):
            n = len(self)
        return sample(self, n, *args, **kwargs)

    pandas.DataFrame.sample = sample_within


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
        out: list[Any] = []
        for text in texts:
            x = self._logit(str(text))
            raw = (-x, x)
            if function_to_apply != "none":
                e = [math.exp(v) for v in raw]
                raw = (e[0] / sum(e), e[1] / sum(e))
            scores: list[dict[str, Any]] = [
                {"label": lab, "score": sc} for lab, sc in zip(self.labels, raw)
            ]
            if top_k is None or return_all_scores:
                out.append(scores)
            else:
                best = sorted(scores, key=lambda d: -d["score"])[: int(top_k)]
                out.append(best[0] if top_k == 1 else best)
        return out


class _ScorerModel:
    """What scripts touch of `pipe.model`: its config (pad_token_id, labels), device, to(),
    eval()."""

    device = "cpu"

    def __init__(self, labels: tuple[str, ...]) -> None:
        from transformers import PretrainedConfig

        self.config = PretrainedConfig(
            id2label=dict(enumerate(labels)), label2id={v: i for i, v in enumerate(labels)}
        )
        # transformers 5's base config no longer defines the token ids; the configs of real
        # models do (stack-llama sets `pipe.model.config.pad_token_id = ...eos_token_id`)
        self.config.pad_token_id = None
        self.config.bos_token_id = tiny.BOS_ID
        self.config.eos_token_id = tiny.EOS_ID

    def to(self, *args: Any, **kwargs: Any) -> _ScorerModel:
        return self

    def eval(self) -> _ScorerModel:
        return self


def _pipeline_on_this_machine(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A pipeline's `device=0` (`"cuda"`, `"cuda:0"`) set to the CPU where this machine has no
    GPU, the override listed, as `.to("cuda")` is (caps.patch_cuda); its `device_map` as a
    checkpoint's is."""
    kwargs = _on_this_machine(kwargs, "pipeline")
    device = kwargs.get("device")
    if device is None or not _gpu_device(device) or (isinstance(device, int) and device < 0):
        return kwargs
    import torch

    if torch.cuda.is_available():
        return kwargs
    caps.note("pipeline", "device", device, "cpu")
    return {**kwargs, "device": "cpu"}


def patch_pipeline(module: Any) -> None:
    """`transformers.pipeline` (from transformers.pipelines): text classification is a
    TinyScorer."""
    original = module.pipeline

    def pipeline(task: Any = None, *args: Any, **kwargs: Any) -> Any:
        if task in ("sentiment-analysis", "text-classification"):
            return TinyScorer()
        return original(task, *args, **_pipeline_on_this_machine(kwargs))

    module.pipeline = pipeline
    top = sys.modules.get("transformers")
    if top is not None and "pipeline" in vars(top):
        top.pipeline = pipeline  # type: ignore[attr-defined]


def patch_reference_model(module: Any) -> None:
    """`create_reference_model(model, num_shared_layers=6)`: the tiny stand-in has fewer layers
    than the model the script names, and TRL raises "Layer pattern could not be matched" for a
    layer it lacks. The count is capped below the stand-in's depth, and the cap is listed among
    the run's overrides (the real model has those layers)."""
    original = getattr(module, "create_reference_model", None)
    if original is None or getattr(original, "_smoke_capped", False):
        return

    def create_reference_model(model, num_shared_layers=None, pattern=None):  # type: ignore[no-untyped-def]
        config = getattr(model, "config", None)
        layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)
        if (
            isinstance(num_shared_layers, int)
            and pattern is None
            and isinstance(layers, int)
            and num_shared_layers >= layers
        ):
            capped = max(layers - 1, 0)
            caps.note("create_reference_model", "num_shared_layers", num_shared_layers, capped)
            num_shared_layers = capped
        return original(model, num_shared_layers=num_shared_layers, pattern=pattern)

    create_reference_model._smoke_capped = True  # type: ignore[attr-defined]
    module.create_reference_model = create_reference_model
