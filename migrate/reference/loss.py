"""Chunked next-token NLL over an ``lm_head`` that never builds the full (N, V) logits.

The projection GEMMs run in the compute dtype (bf16 on tensor cores / AVX512-BF16); only the
log-softmax of one block of rows at a time runs in fp32. Gradients are computed chunk by chunk
inside the forward (3 GEMMs per chunk, nothing recomputed), which measured faster than
checkpointed recomputation on every shape we tried (docs/benchmarks.md, "Loss").
"""

from __future__ import annotations

import dataclasses

import torch

__all__ = ["DEFAULT_CHUNK_BYTES", "auto_chunk_size", "chunked_nll"]

# Bytes of one chunk of logits in the compute dtype when `chunk_size` is not given: large enough
# that the grad_weight GEMM (inner dimension = chunk size) runs near peak, small enough that the
# chunk stays well under TRL 1.13's one (256 x V) chunk at 150k-250k vocabularies.
DEFAULT_CHUNK_BYTES = 64 * 2**20
# fp32 scratch for one block of rows on CPU: well inside a shared L3 cache, so the softmax passes
# stay on chip, yet few enough blocks that a busy machine's thread stragglers cost little.
_CPU_BLOCK_BYTES = 8 * 2**20


@dataclasses.dataclass(frozen=True)
class _Options:
    chunk_size: int
    softcap: float | None
    scale: float  # 1 / (num_items_in_batch or number of valid tokens)
    grad_hidden: bool
    grad_weight: bool
    grad_bias: bool


def auto_chunk_size(vocab_size: int, *, itemsize: int = 2) -> int:
    """Tokens per chunk so that one (C, V) chunk of logits takes about DEFAULT_CHUNK_BYTES.

    A power of two between 64 and 1024: 1024 for V = 32k, 128 for V = 152k and 248k (bf16).
    """
    c = DEFAULT_CHUNK_BYTES // max(1, vocab_size * itemsize)
    c = 1 << max(6, min(10, c.bit_length() - 1)) if c > 0 else 64
    return c


def chunked_nll(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    labels: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    chunk_size: int | None = None,
    ignore_index: int = -100,
    num_items_in_batch: float | torch.Tensor | None = None,
    shift: bool = True,
    softcap: float | None = None,
) -> torch.Tensor:
    """Mean next-token negative log-likelihood of ``labels`` under ``hidden @ weight.T (+ bias)``.

    Args:
        hidden: (B, T, H) or (N, H), bf16 / fp16 / fp32: the backbone's last hidden states.
        weight: (V, H), any float dtype: the ``lm_head`` weight; cast to the compute dtype.
        labels: (B, T) or (N,), int64 in [0, V) or ``ignore_index``.
        bias: optional (V,) ``lm_head`` bias, added in fp32.
        chunk_size: valid tokens per chunk; peak extra memory is about chunk_size x V elements
            of the compute dtype plus an fp32 block of rows. Default: ``auto_chunk_size(V)``.
        ignore_index: label value whose positions are dropped before any GEMM.
        num_items_in_batch: divide the summed loss by this (the Trainer's global token count
            under gradient accumulation) instead of by the number of valid tokens here.
        shift: position t predicts ``labels[..., t + 1]`` (the causal-LM shift, per row for 3-D
            ``hidden``, along N for 2-D); False when labels are already aligned with ``hidden``.
        softcap: Gemma-style final logit soft-capping, ``softcap * tanh(logits / softcap)``.

    Returns:
        A 0-dim fp32 tensor. Its gradients have the dtypes of ``hidden``, ``weight`` and ``bias``.
        With no valid token it is 0 and still connected to the graph (all gradients zero).

    The compute dtype is the active autocast dtype of ``hidden``'s device, else ``hidden.dtype``.
    Gradients are formed during the forward when grad mode is on and an input requires them, so
    a training step costs 6·N·H·V FLOPs; under ``torch.no_grad()`` only the 2·N·H·V of the loss.
    Double backward is not supported.
    """
    h2d, flat_labels = _flatten(
        hidden, labels, shift=shift, ignore_index=ignore_index
    )  # (M, H), (M,)
    dtype = _compute_dtype(hidden)
    h2d = h2d.to(dtype)
    w = weight.to(dtype)  # (V, H); no copy when already in the compute dtype
    vocab = w.shape[0]
    c = chunk_size if chunk_size is not None else auto_chunk_size(vocab, itemsize=w.element_size())
    if c < 1:
        raise ValueError(f"chunk_size must be positive, got {c}")
    valid = (flat_labels != ignore_index).nonzero().squeeze(1)  # (n,) int64
    n_valid = valid.numel()
    denom = _denominator(num_items_in_batch, n_valid)
    grad_on = torch.is_grad_enabled()
    opts = _Options(
        chunk_size=c,
        softcap=softcap,
        scale=1.0 / denom,
        grad_hidden=grad_on and h2d.requires_grad,
        grad_weight=grad_on and w.requires_grad,
        grad_bias=grad_on and bias is not None and bias.requires_grad,
    )
    with torch.autocast(h2d.device.type, enabled=False):
        loss = _ChunkedNLL.apply(h2d, w, bias, flat_labels, valid, opts)
    return loss


def _flatten(
    hidden: torch.Tensor, labels: torch.Tensor, *, shift: bool, ignore_index: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T, H) or (N, H) hidden and matching labels -> (M, H) rows and (M,) aligned targets.

    The shift moves labels left by one and ignores each row's last position, so ``hidden`` is
    only reshaped (a view when contiguous), never sliced into a copy.
    """
    if hidden.dim() not in (2, 3) or labels.shape != hidden.shape[:-1]:
        raise ValueError(
            f"expected hidden (B, T, H) or (N, H) and labels of its leading shape, "
            f"got {tuple(hidden.shape)} and {tuple(labels.shape)}"
        )
    if shift:
        pad = labels.new_full((*labels.shape[:-1], 1), ignore_index)
        labels = torch.cat([labels[..., 1:], pad], dim=-1)  # (B, T) or (N,)
    return hidden.reshape(-1, hidden.shape[-1]), labels.reshape(-1)


def _compute_dtype(hidden: torch.Tensor) -> torch.dtype:
    device_type = hidden.device.type
    if torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return hidden.dtype


def _denominator(num_items_in_batch: float | torch.Tensor | None, n_valid: int) -> float:
    if num_items_in_batch is None:
        return float(max(n_valid, 1))
    value = float(num_items_in_batch)
    if not value > 0:
        raise ValueError(f"num_items_in_batch must be positive, got {value}")
    return value


class _ChunkedNLL(torch.autograd.Function):
    """Loss and, when asked, its gradients in one pass over chunks of valid tokens."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        hidden: torch.Tensor,  # (M, H) compute dtype
        weight: torch.Tensor,  # (V, H) compute dtype
        bias: torch.Tensor | None,  # (V,)
        labels: torch.Tensor,  # (M,) int64, ignore_index where dropped
        valid: torch.Tensor,  # (n,) int64 row indices of valid labels
        opts: _Options,
    ) -> torch.Tensor:
        rows_h = (
            hidden if valid.numel() == hidden.shape[0] else hidden.index_select(0, valid)
        )  # (n, H)
        targets = labels.index_select(0, valid)  # (n,)
        state = _run_chunks(rows_h, weight, bias, targets, opts)
        ctx.opts = opts  # type: ignore[attr-defined]
        ctx.shapes = (hidden.shape, weight.shape)  # type: ignore[attr-defined]
        ctx.save_for_backward(valid, state.grad_rows, state.grad_weight, state.grad_bias)  # type: ignore[arg-type]
        return state.nll_sum * opts.scale

    @staticmethod
    def backward(ctx, grad_loss: torch.Tensor):  # type: ignore[no-untyped-def, override]
        valid, grad_rows, grad_weight, grad_bias = ctx.saved_tensors
        opts: _Options = ctx.opts
        hidden_shape, weight_shape = ctx.shapes
        g = float(grad_loss)  # one scalar; a device sync per backward on GPU
        grad_hidden = None
        if opts.grad_hidden:
            grad_hidden = grad_rows.new_zeros(hidden_shape)  # (M, H)
            if grad_rows.numel():
                grad_hidden.index_copy_(0, valid, grad_rows)
            _scale_(grad_hidden, g)
        if opts.grad_weight:
            if grad_weight is None:  # no valid token: zero, but a gradient all the same
                grad_weight = grad_rows.new_zeros(weight_shape)
            _scale_(grad_weight, g)
        if grad_bias is not None:
            _scale_(grad_bias, g)
        return grad_hidden, grad_weight, grad_bias, None, None, None


def _scale_(t: torch.Tensor, g: float) -> None:
    if g != 1.0:
        t.mul_(g)


@dataclasses.dataclass
class _State:
    nll_sum: torch.Tensor  # () fp32
    grad_rows: torch.Tensor  # (n, H) compute dtype, already times opts.scale; empty if unused
    grad_weight: torch.Tensor | None  # (V, H) compute dtype, times opts.scale
    grad_bias: torch.Tensor | None  # (V,) bias dtype, times opts.scale


def _run_chunks(
    h: torch.Tensor,  # (n, H)
    w: torch.Tensor,  # (V, H)
    bias: torch.Tensor | None,  # (V,)
    targets: torch.Tensor,  # (n,)
    opts: _Options,
) -> _State:
    n, vocab = h.shape[0], w.shape[0]
    c = min(opts.chunk_size, max(n, 1))
    want_grad = opts.grad_hidden or opts.grad_weight or opts.grad_bias
    logits = h.new_empty((c, vocab))  # (C, V) reused: logits, then the chunk's grad_logits
    block = _block_rows(c, vocab, h.device)
    scratch = cap = None
    if _softmax_in_place(h.device):
        scratch = h.new_empty((block, vocab), dtype=torch.float32)  # (R, V) fp32
        cap = torch.empty_like(scratch) if opts.softcap is not None else None  # (R, V) tanh values
    bias32 = bias.detach().float() if bias is not None else None  # (V,)
    nll = h.new_empty((n, 1), dtype=torch.float32)  # (n, 1) per-token loss
    grad_rows = h.new_empty((n, h.shape[1]) if opts.grad_hidden else (0, h.shape[1]))  # (n, H)
    grad_weight = torch.empty_like(w) if opts.grad_weight and n else None  # (V, H)
    grad_bias32 = torch.zeros(vocab, device=h.device) if opts.grad_bias else None  # (V,) fp32
    for start in range(0, n, c):
        stop = min(start + c, n)
        h_c, z = h[start:stop], logits[: stop - start]  # (c, H), (c, V)
        torch.mm(h_c, w.t(), out=z)
        for r in range(0, stop - start, block):
            rows = slice(r, min(r + block, stop - start))
            _softmax_block(
                z[rows],
                targets[start + rows.start : start + rows.stop],
                nll[start + rows.start : start + rows.stop],
                scratch=scratch,
                cap=cap,
                bias32=bias32,
                softcap=opts.softcap,
                grad=want_grad,
                grad_bias32=grad_bias32,
            )
        if opts.grad_hidden:
            torch.mm(z, w, out=grad_rows[start:stop]).mul_(opts.scale)  # (c, H)
        if grad_weight is not None:
            beta = 0.0 if start == 0 else 1.0  # the first chunk overwrites the empty buffer
            grad_weight.addmm_(z.t(), h_c, beta=beta, alpha=opts.scale)  # (V, H)
    grad_bias = None
    if grad_bias32 is not None and bias is not None:
        grad_bias = grad_bias32.mul_(opts.scale).to(bias.dtype)
    return _State(nll.sum(), grad_rows, grad_weight, grad_bias)


def _block_rows(c: int, vocab: int, device: torch.device) -> int:
    """Rows of fp32 scratch per softmax block: _CPU_BLOCK_BYTES on CPU, the whole chunk on GPU."""
    if device.type != "cpu":
        return c
    return max(1, min(c, _CPU_BLOCK_BYTES // (4 * vocab)))


def _softmax_in_place(device: torch.device) -> bool:
    """CPU: reuse one fp32 scratch block, since fresh pages cost page faults on every chunk. GPU:
    the caching allocator makes fresh buffers free, and kernels then never see aliased memory."""
    return device.type == "cpu"


def _log_probs(
    z: torch.Tensor,  # (R, V) compute dtype
    *,
    scratch: torch.Tensor | None,  # (>= R, V) fp32, or None to allocate
    cap: torch.Tensor | None,  # (>= R, V) fp32, or None to allocate (softcap only)
    bias32: torch.Tensor | None,  # (V,) fp32
    softcap: float | None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """fp32 log-softmax (R, V) of the logits after bias and softcap, and tanh(x / softcap) if
    capped."""
    r = z.shape[0]
    if (
        scratch is None
        and bias32 is None
        and softcap is None
        and z.is_cuda
        and z.dtype != torch.float32
    ):
        return torch._log_softmax(z, 1, True), None  # the upcast happens inside the kernel
    if scratch is not None:
        x = scratch[:r]
        x.copy_(z)
    else:
        x = z.to(torch.float32, copy=True)
    if bias32 is not None:
        x.add_(bias32)
    t = None
    if softcap is not None:
        t = cap[:r] if cap is not None else torch.empty_like(x)
        torch.div(x, softcap, out=t).tanh_()  # (R, V)
        torch.mul(t, softcap, out=x)
    if scratch is not None:
        torch._log_softmax(x, 1, False, out=x)  # in place, row by row
        return x, t
    return torch.log_softmax(x, 1), t


def _softmax_block(
    z: torch.Tensor,  # (R, V) compute dtype: logits in, grad_logits out (when grad)
    targets: torch.Tensor,  # (R,) int64
    nll: torch.Tensor,  # (R, 1) fp32 out: -log p(target)
    *,
    scratch: torch.Tensor | None,  # (>= R, V) fp32, or None to allocate
    cap: torch.Tensor | None,  # (>= R, V) fp32 when softcap, or None to allocate
    bias32: torch.Tensor | None,  # (V,) fp32
    softcap: float | None,
    grad: bool,
    grad_bias32: torch.Tensor | None,  # (V,) fp32 accumulator
) -> None:
    """fp32 log-softmax of one block of rows; writes the NLL and, when asked, dL/dlogits into z."""
    x, t = _log_probs(z, scratch=scratch, cap=cap, bias32=bias32, softcap=softcap)  # (R, V) fp32
    col = targets.unsqueeze(1)  # (R, 1)
    torch.gather(x, 1, col, out=nll).neg_()
    if not grad:
        return
    x.exp_()  # softmax
    x.scatter_add_(1, col, x.new_full((z.shape[0], 1), -1.0))  # p - onehot
    if t is not None:
        x.mul_(t.square_().neg_().add_(1.0))  # d softcap / d logits = 1 - tanh^2
    if grad_bias32 is not None:
        grad_bias32.add_(x.sum(0))
    z.copy_(x)
