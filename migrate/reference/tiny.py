"""Tiny, offline building blocks for smoke runs: text, a tokenizer, models and datasets.

Nothing here downloads anything: text comes from a small seeded grammar, the tokenizer is a
byte-level BPE trained in-process with `tokenizers`, and models are built from configs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import datasets
    import torch
    import transformers

__all__ = [
    "BOS_ID",
    "CHAT_TEMPLATE",
    "EOS_ID",
    "PAD_ID",
    "SPECIAL_TOKENS",
    "tiny_causal_lm",
    "tiny_corpus",
    "tiny_seq_classifier",
    "tiny_text_dataset",
    "tiny_tokenizer",
]

Arch = Literal["qwen3", "llama", "gpt2", "bloom", "gpt_neox"]

PAD, EOS, BOS = "<|pad|>", "<|endoftext|>", "<|bos|>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (PAD, EOS, BOS, IM_START, IM_END)  # ids 0..4, in this order
PAD_ID, EOS_ID, BOS_ID = 0, 1, 2

# ChatML, as Qwen models use; enough for conversational ("messages") datasets.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_SUBJECTS = ("the cat", "a dog", "the model", "my friend", "the trainer", "a robot", "the bird")
_VERBS = ("sees", "likes", "follows", "helps", "counts", "paints", "finds")
_OBJECTS = ("the ball", "a tree", "the river", "some tokens", "the house", "a red box", "the moon")
_ENDINGS = ("today.", "again.", "at night.", "in the park.", "with care.", "very slowly.")


def tiny_corpus(n: int, *, seed: int = 0) -> list[str]:
    """``n`` short sentences from a fixed grammar: varied, yet learnable in a few steps."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_ENDINGS)}"
        for _ in range(n)
    ]


def tiny_tokenizer(
    *, vocab_size: int = 384, corpus: Sequence[str] | None = None
) -> transformers.PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained here on ``corpus`` (default: ``tiny_corpus(2000)``).

    It has pad/eos/bos and ChatML tokens and ``CHAT_TEMPLATE``; padding is on the right.
    ``vocab_size`` is an upper bound: BPE stops early when the corpus runs out of merges.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(
        list(corpus) if corpus is not None else tiny_corpus(2000), trainer=trainer
    )
    # model_max_length: the tiny models' 512 positions, so `padding="max_length"` pads to a
    # length, as a real checkpoint's tokenizer does (unset, it pads nothing)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=EOS,
        bos_token=BOS,
        padding_side="right",
        model_max_length=512,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _backbone_config(
    arch: Arch, *, vocab_size: int, hidden_size: int, layers: int, heads: int
) -> transformers.PretrainedConfig:
    from transformers import LlamaConfig, Qwen3Config

    common: dict[str, Any] = dict(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        head_dim=hidden_size // heads,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
    )
    if arch == "qwen3":
        return Qwen3Config(**common)
    if arch == "llama":
        return LlamaConfig(**common)
    # The module names LoRA configs of PPO-era scripts target: GPT-2's c_attn/c_proj/c_fc,
    # BLOOM's and Pythia's query_key_value/dense.
    ids: dict[str, Any] = {"pad_token_id": PAD_ID, "bos_token_id": BOS_ID, "eos_token_id": EOS_ID}
    if arch == "gpt2":
        from transformers import GPT2Config

        return GPT2Config(
            vocab_size=vocab_size,
            n_embd=hidden_size,
            n_layer=layers,
            n_head=heads,
            n_positions=512,
            tie_word_embeddings=False,
            **ids,
        )
    if arch == "bloom":
        from transformers import BloomConfig

        return BloomConfig(
            vocab_size=vocab_size,
            hidden_size=hidden_size,
            n_layer=layers,
            n_head=heads,
            tie_word_embeddings=False,
            **ids,
        )
    if arch == "gpt_neox":
        from transformers import GPTNeoXConfig

        return GPTNeoXConfig(
            vocab_size=vocab_size,
            hidden_size=hidden_size,
            intermediate_size=hidden_size * 2,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            max_position_embeddings=512,
            tie_word_embeddings=False,
            **ids,
        )
    raise ValueError(
        f"unknown arch {arch!r}: expected 'qwen3', 'llama', 'gpt2', 'bloom' or 'gpt_neox'"
    )


def tiny_causal_lm(
    arch: Arch = "qwen3",
    *,
    vocab_size: int = 384,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    seed: int = 0,
    dtype: torch.dtype | None = None,
) -> transformers.PreTrainedModel:
    """A randomly initialised Qwen3- or Llama-shaped causal LM (about 0.1M parameters by default).

    Token ids follow ``tiny_tokenizer``: pad 0, eos 1, bos 2. The ``lm_head`` is untied.
    """
    import torch
    from transformers import AutoModelForCausalLM

    config = _backbone_config(
        arch, vocab_size=vocab_size, hidden_size=hidden_size, layers=layers, heads=heads
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    return model.to(dtype) if dtype is not None else model


def tiny_seq_classifier(
    num_labels: int = 1,
    *,
    arch: Arch = "qwen3",
    vocab_size: int = 384,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    seed: int = 0,
) -> transformers.PreTrainedModel:
    """A tiny sequence classifier (``num_labels=1``: a reward model) on the same backbone."""
    import torch
    from transformers import AutoModelForSequenceClassification

    config = _backbone_config(
        arch, vocab_size=vocab_size, hidden_size=hidden_size, layers=layers, heads=heads
    )
    config.num_labels = num_labels
    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_config(config)


_COLUMNS = ("text", "prompt", "completion", "messages", "chosen", "rejected", "label")


def _row(sentence: str, other: str, index: int, column: str) -> Any:
    head, _, tail = sentence.partition(" ")
    if column == "text":
        return sentence
    if column == "prompt":
        return head
    if column == "completion":
        return " " + tail
    if column == "messages":
        return [{"role": "user", "content": head}, {"role": "assistant", "content": tail}]
    if column == "chosen":
        return sentence
    if column == "rejected":
        return other
    if column == "label":
        return index % 2
    raise ValueError(f"unknown column {column!r}; known: {', '.join(_COLUMNS)}")


def tiny_text_dataset(
    n: int = 64, *, columns: Sequence[str] = ("text",), seed: int = 0
) -> datasets.Dataset:
    """An in-memory ``datasets.Dataset`` of ``n`` rows built from ``tiny_corpus``.

    Columns, any subset: ``text`` (a sentence), ``prompt`` / ``completion`` (its first word /
    the rest), ``messages`` (a user/assistant exchange), ``chosen`` / ``rejected`` (two
    sentences), ``label`` (0/1).
    """
    from datasets import Dataset

    unknown = [c for c in columns if c not in _COLUMNS]
    if unknown:
        raise ValueError(f"unknown columns {unknown}; known: {', '.join(_COLUMNS)}")
    sentences = tiny_corpus(2 * n, seed=seed)
    rows = [(sentences[i], sentences[n + i]) for i in range(n)]
    return Dataset.from_dict(
        {c: [_row(s, o, i, c) for i, (s, o) in enumerate(rows)] for c in columns}
    )
