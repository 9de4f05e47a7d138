"""The environment smoke check: train the reference stack for a few steps, return a value.

`check_env` builds a tiny causal LM, tokenizer and dataset offline, trains them the way TRL 1.13
does (bf16 autocast, chunked ``lm_head`` loss), and reports versions, losses, throughput and
TRL4nn findings. `trl-migrate smoke --env` renders its result; nothing here prints.
"""

from __future__ import annotations

import dataclasses
import math
import platform
import time
import traceback
from importlib import metadata
from typing import TYPE_CHECKING, Any

from migrate.kernel.findings import Finding, Severity
from migrate.reference.parity import (
    Parity,
    chunked_loss,
    parity,
)

if TYPE_CHECKING:
    import torch

ENV_PATH = "<environment>"  # the `path` of smoke --env findings
PACKAGES = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "tokenizers")
MIN_DROP = 0.02  # the last steps' mean loss must be at least 2 % below the first step's


@dataclasses.dataclass
class EnvResult:
    """What `smoke --env` found. `error` is set when the check itself could not run."""

    versions: dict[str, str]
    device: str = ""
    dtype: str = ""
    arch: str = ""
    lora: bool = False
    parameters: int = 0
    trainable: int = 0
    losses: list[float] = dataclasses.field(default_factory=list)
    tokens: int = 0  # target tokens trained on
    seconds: float = 0.0  # wall time of the training steps
    parity: Parity | None = None
    findings: list[Finding] = dataclasses.field(default_factory=list)
    error: str | None = None

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "error"
        return "fail" if any(f.severity is Severity.ERROR for f in self.findings) else "pass"

    @property
    def exit_code(self) -> int:
        return {"pass": 0, "fail": 1, "error": 2}[self.verdict]

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out.pop("findings")
        out["tokens_per_s"] = round(self.tokens_per_s, 1)
        out["verdict"] = self.verdict
        if self.parity is not None:
            out["parity"]["ok"] = self.parity.ok
        return out


def _finding(code: str, severity: Severity, message: str) -> Finding:
    return Finding(code, severity, ENV_PATH, 0, 0, message)


def package_versions() -> dict[str, str]:
    """Python, platform and the installed versions of the training stack ("-" if missing)."""
    out = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    return out


def check_env(
    *,
    steps: int = 8,
    lora: bool = False,
    loss_parity: bool = False,
    arch: str = "qwen3",
    device: str | None = None,
    batch_size: int = 8,
    seed: int = 0,
) -> EnvResult:
    """Train a tiny model for ``steps`` steps with our chunked loss under bf16 autocast.

    Never raises for a broken environment: a missing package or a crash comes back as a result
    with ``error`` set (TRL406) and exit code 2.
    """
    if steps < 2:
        raise ValueError("steps must be at least 2 to tell whether the loss goes down")
    result = EnvResult(versions=package_versions(), arch=arch, lora=lora)
    try:
        _run(
            result,
            steps=steps,
            lora=lora,
            loss_parity=loss_parity,
            device=device,
            batch_size=batch_size,
            seed=seed,
        )
    except Exception as e:  # the check could not run: report it, never raise
        last = traceback.extract_tb(e.__traceback__)[-1]
        result.error = f"{type(e).__name__}: {e} ({last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
        result.findings.append(
            _finding("TRL406", Severity.ERROR, f"the reference stack could not run: {result.error}")
        )
    return result


def _run(
    result: EnvResult,
    *,
    steps: int,
    lora: bool,
    loss_parity: bool,
    device: str | None,
    batch_size: int,
    seed: int,
) -> None:
    import torch

    from migrate.reference import tiny

    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    result.device = _describe_device(dev)
    dtype = torch.bfloat16 if bf16_supported(dev) else torch.float32
    result.dtype = str(dtype).removeprefix("torch.")
    if dtype is torch.float32:
        result.findings.append(
            _finding(
                "TRL403",
                Severity.WARNING,
                f"bf16 is not supported on {dev.type}; trained in fp32 instead",
            )
        )
    tok = tiny.tiny_tokenizer()
    model = tiny.tiny_causal_lm(result.arch, vocab_size=len(tok), seed=seed).to(dev)  # type: ignore[arg-type]
    if lora:
        model = _with_lora(model)
    result.parameters = sum(p.numel() for p in model.parameters())
    result.trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    batches = _batches(tok, n=batch_size * steps, batch_size=batch_size, device=dev, seed=seed)
    if loss_parity:
        result.parity = parity(model, batches[0], dtype)
        _parity_findings(result)
    _train(result, model, batches, dtype=dtype, lr=1e-2 if lora else 3e-3)


def bf16_supported(device: torch.device) -> bool:
    """Whether a bf16 GEMM under autocast runs and is finite on ``device``."""
    import torch

    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return False
    try:
        x = torch.ones(4, 8, device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            y = x @ x.t()
        return y.dtype is torch.bfloat16 and bool(torch.isfinite(y).all())
    except (RuntimeError, TypeError):
        return False


def _describe_device(dev: torch.device) -> str:
    import torch

    if dev.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(dev)})"
    return f"cpu ({torch.get_num_threads()} threads, {torch.backends.cpu.get_cpu_capability()})"


def _with_lora(model: Any) -> Any:
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=8,
        lora_alpha=16,
        lora_dropout=0.0,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
    )
    return get_peft_model(model, config)


def _batches(
    tok: Any, *, n: int, batch_size: int, device: torch.device, seed: int
) -> list[dict[str, torch.Tensor]]:
    """Tokenized, right-padded batches of the tiny corpus; labels are -100 on padding."""
    from migrate.reference.tiny import tiny_corpus

    texts = [t + tok.eos_token for t in tiny_corpus(n, seed=seed + 1)]
    out = []
    for i in range(0, n, batch_size):
        enc = tok(texts[i : i + batch_size], padding=True, return_tensors="pt")
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)  # (B, T)
        out.append(
            {
                "input_ids": enc["input_ids"].to(device),
                "attention_mask": enc["attention_mask"].to(device),
                "labels": labels.to(device),
            }
        )
    return out


def _train(
    result: EnvResult,
    model: Any,
    batches: list[dict[str, torch.Tensor]],
    *,
    dtype: torch.dtype,
    lr: float,
) -> None:
    import torch

    device_type = batches[0]["input_ids"].device.type
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    model.train()
    start = time.perf_counter()
    for batch in batches:
        with torch.autocast(device_type, dtype=dtype, enabled=dtype is not torch.float32):
            loss = chunked_loss(model, batch)
        value = loss.detach().item()
        result.losses.append(value)
        if not math.isfinite(value):
            result.findings.append(
                _finding("TRL402", Severity.ERROR, f"loss is {value} at step {len(result.losses)}")
            )
            break
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        result.tokens += int((batch["labels"][:, 1:] != -100).sum())
    result.seconds = time.perf_counter() - start
    if math.isfinite(result.losses[-1]):
        _check_decrease(result)


def _check_decrease(result: EnvResult) -> None:
    losses = result.losses
    tail = losses[-max(1, len(losses) // 4) :]
    last = sum(tail) / len(tail)
    if last > losses[0] * (1.0 - MIN_DROP):
        result.findings.append(
            _finding(
                "TRL401",
                Severity.ERROR,
                f"loss did not go down: {losses[0]:.4f} at step 1, {last:.4f} over the last "
                f"{len(tail)} step(s)",
            )
        )


def _parity_findings(result: EnvResult) -> None:
    p = result.parity
    assert p is not None
    if p.trl is None:
        result.findings.append(
            _finding(
                "TRL405",
                Severity.WARNING,
                "TRL 1.13's chunked loss is not importable; compared ours with the plain loss only",
            )
        )
    if not p.ok:
        trl = (
            f", TRL {p.trl:.6f} ({p.trl_rel:.1e})"
            if p.trl is not None and p.trl_rel is not None
            else ""
        )
        result.findings.append(
            _finding(
                "TRL404",
                Severity.ERROR,
                f"chunked loss differs from the plain {result.dtype} loss {p.plain:.6f}: "
                f"ours {p.ours:.6f} ({p.ours_rel:.1e}){trl}; tolerance {p.tolerance:.0e}",
            )
        )
