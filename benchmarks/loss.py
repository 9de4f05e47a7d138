"""Benchmark of lm_head + cross-entropy losses: time, peak memory and error, one process each.

    python benchmarks/loss.py                          # all shapes, writes docs/benchmarks.md
    python benchmarks/loss.py --shapes small --repeats 2 --no-write
    python benchmarks/loss.py --device cuda            # on a GPU: CUDA events, max_memory_allocated

Every variant runs forward + backward on the same inputs (bf16 hidden (N, H) and weight (V, H),
all N labels valid) in its own process, so peak memory is its own: on CPU the rise of the
process's resident high-water mark (reset just before the timed steps) over its resident size
with the inputs alone; on CUDA `max_memory_allocated` over the allocation before the steps.
Error is against an fp64 computation on the same rounded inputs. The compute limit is
6*N*H*V FLOPs at the rate the shape's three bf16 GEMMs reach here when run alone.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
TRL_CHUNK = 256  # TRL's own _CHUNKED_LM_HEAD_CHUNK_SIZE; the 1.12-style variant uses it too


@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    n: int  # tokens
    h: int  # hidden size
    v: int  # vocabulary size
    repeats: int  # timed steps by default (after one warm-up)

    @property
    def flops(self) -> float:
        return 6.0 * self.n * self.h * self.v


SHAPES = {
    "small": Shape("small", 2048, 1024, 32768, 3),  # the shape of the pre-code measurements
    "release": Shape("release", 256, 2048, 248320, 3),  # TRL 1.13 release micro-benchmark
    "long": Shape("long", 4096, 1024, 151936, 2),  # long sequence, Qwen-sized vocabulary
}

# name -> what it is (the docs table's legend). Order is the table's order.
VARIANTS = {
    "naive_fp32": "full logits, fp32 inputs and GEMMs",
    "naive_bf16": "full logits, bf16 GEMM, fp32 softmax (a plain bf16 lm_head + cross_entropy)",
    "chunked_upcast": "TRL 1.12's way: checkpointed chunks, each GEMM on fp32 copies of h and W",
    "trl_1_13": "TRL 1.13's own `_chunked_cross_entropy_loss`, imported from the installed trl",
    "compile_naive": "`torch.compile` of naive_bf16 (compile time excluded)",
    "chunked_bf16_recompute": "our chunks with the other backward: checkpointing (forward GEMM "
    "twice)",
    "ours": "`migrate.reference.loss.chunked_nll`: gradients formed chunk by chunk in forward",
    "ours_n8": "ours at N/8, for the memory-flatness check",
}


# ---------------------------------------------------------------- worker side (one variant)


def _inputs(shape: Shape, device: str) -> tuple[Any, Any, Any]:
    import torch

    g = torch.Generator().manual_seed(1234)
    hidden = torch.randn(shape.n, shape.h, generator=g).to(torch.bfloat16)  # (N, H)
    weight = torch.empty(shape.v, shape.h, dtype=torch.bfloat16)  # (V, H), logits std about 2
    for i in range(0, shape.v, 16384):
        rows = weight[i : i + 16384]
        rows.copy_(torch.randn(rows.shape, generator=g) * (2.0 / shape.h**0.5))
    labels = torch.randint(0, shape.v, (shape.n,), generator=g)  # (N,)
    return hidden.to(device), weight.to(device), labels.to(device)


def _loss_fn(name: str, chunk: int) -> Callable[[Any, Any, Any], Any]:
    import torch
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    def naive(h: Any, w: Any, y: Any) -> Any:
        return F.cross_entropy((h @ w.t()).float(), y)  # (N, V) logits

    def chunked(project: Callable[[Any, Any], Any], c: int) -> Callable[[Any, Any, Any], Any]:
        def piece(hc: Any, w: Any, yc: Any) -> Any:
            return F.cross_entropy(project(hc, w), yc, reduction="sum")

        def loss(h: Any, w: Any, y: Any) -> Any:
            total = h.new_zeros((), dtype=torch.float32)
            for s in range(0, h.shape[0], c):
                total = total + checkpoint(
                    piece, h[s : s + c], w, y[s : s + c], use_reentrant=False
                )
            return total / h.shape[0]

        return loss

    if name in ("naive_fp32", "naive_bf16"):
        return naive
    if name == "compile_naive":
        return torch.compile(naive)
    if name == "chunked_upcast":
        return chunked(lambda hc, w: hc.float() @ w.float().t(), TRL_CHUNK)
    if name == "chunked_bf16_recompute":
        return chunked(lambda hc, w: (hc @ w.t()).float(), chunk)
    if name == "trl_1_13":
        from trl.trainer.sft_trainer import _chunked_cross_entropy_loss

        return lambda h, w, y: _chunked_cross_entropy_loss(
            h[None], w, TRL_CHUNK, shift_labels=y[None]
        )[0]
    if name in ("ours", "ours_n8"):
        from migrate.reference.loss import chunked_nll

        return lambda h, w, y: chunked_nll(h, w, y, shift=False, chunk_size=chunk)
    raise ValueError(f"unknown variant {name}")


def _rss_kib(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    match = re.search(rf"{field}:\s+(\d+)", status)
    return int(match.group(1)) if match else 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM (Linux)
        return True
    except OSError:
        return False


class _Meter:
    """Wall time per step and peak memory over a group of steps, on CPU or CUDA."""

    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        self.cuda = device.startswith("cuda")

    def start_peak(self) -> None:
        gc.collect()
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()
            self.base = self.torch.cuda.memory_allocated()
        else:
            self.base = _rss_kib("VmRSS") * 1024
            if not _reset_peak():
                self.base = _rss_kib("VmHWM") * 1024  # best effort: the high-water mark so far

    def peak_bytes(self) -> int:
        if self.cuda:
            return self.torch.cuda.max_memory_allocated() - self.base
        return _rss_kib("VmHWM") * 1024 - self.base

    def time(self, step: Callable[[], None]) -> float:
        if not self.cuda:
            t0 = time.perf_counter()
            step()
            return time.perf_counter() - t0
        begin, end = (self.torch.cuda.Event(enable_timing=True) for _ in range(2))
        begin.record()
        step()
        end.record()
        self.torch.cuda.synchronize()
        return begin.elapsed_time(end) / 1000.0


class _Variant:
    """One variant's inputs and loss in this process; `step` times one forward + backward."""

    def __init__(self, name: str, shape: Shape, *, device: str, chunk: int) -> None:
        if name == "ours_n8":
            shape = dataclasses.replace(shape, n=max(1, shape.n // 8))
        self.name, self.n = name, shape.n
        hidden, weight, self.labels = _inputs(shape, device)
        if name == "naive_fp32":
            hidden, weight = hidden.float(), weight.float()
        self.hidden, self.weight = hidden.requires_grad_(True), weight.requires_grad_(True)
        self.fn = _loss_fn(name, chunk)
        self.meter = _Meter(device)
        self.loss: Any = None
        self.grads_bytes = 0
        self.errors: dict[str, float] = {}

    def _run(self) -> None:
        self.loss = self.fn(self.hidden, self.weight, self.labels)
        self.loss.backward()

    def step(self) -> tuple[float, int]:
        """(seconds, peak bytes above the resident size with inputs only); frees the grads after."""
        self.meter.start_peak()
        seconds = self.meter.time(self._run)
        peak = self.meter.peak_bytes()
        self.grads_bytes = self.hidden.grad.nbytes + self.weight.grad.nbytes
        self.hidden.grad = self.weight.grad = self.loss = None  # idle workers hold inputs only
        return seconds, peak

    def warm_up(self, ref: str | None) -> None:
        """One untimed step; its result is the one checked against the fp64 reference."""
        self._run()
        self.errors = {}
        if ref and self.name != "ours_n8":
            self.errors = _errors(ref, self.loss, self.hidden.grad, self.weight.grad)
        self.hidden.grad = self.weight.grad = self.loss = None

    def summary(self) -> dict[str, Any]:
        return {"variant": self.name, "n": self.n, "grads_bytes": self.grads_bytes, **self.errors}


class _Gemms:
    """The three bf16 GEMMs of one step at this shape, alone, into preallocated outputs."""

    def __init__(self, shape: Shape, *, device: str) -> None:
        import torch

        hidden, weight, _ = _inputs(shape, device)
        logits = torch.empty(shape.n, shape.v, dtype=torch.bfloat16, device=device)  # (N, V)
        g_h, g_w = torch.empty_like(hidden), torch.empty_like(weight)
        self.meter = _Meter(device)
        self.gemms = [
            lambda: torch.mm(hidden, weight.t(), out=logits),  # logits
            lambda: torch.mm(logits, weight, out=g_h),  # grad_hidden
            lambda: torch.mm(logits.t(), hidden, out=g_w),  # grad_weight
        ]

    def step(self) -> tuple[float, int]:
        return sum(self.meter.time(f) for f in self.gemms), 0

    def warm_up(self, ref: str | None) -> None:
        self.step()

    def summary(self) -> dict[str, Any]:
        return {"variant": "gemm"}


def serve(name: str, shape: Shape, *, device: str, chunk: int, ref: str | None) -> None:
    """Worker loop: build, warm up, say READY; then one timed step per `step` line until `done`."""
    bench: _Variant | _Gemms = (
        _Gemms(shape, device=device)
        if name == "gemm"
        else _Variant(name, shape, device=device, chunk=chunk)
    )
    t0 = time.perf_counter()
    bench.warm_up(ref)  # compilation, oneDNN primitives; the error check
    print(f"READY {time.perf_counter() - t0:.3f}", flush=True)
    for line in sys.stdin:
        if line.strip() == "step":
            seconds, peak = bench.step()
            print(f"STEP {seconds:.6f} {peak}", flush=True)
        elif line.strip() == "done":
            break
    print("RESULT " + json.dumps(bench.summary()), flush=True)


def _errors(ref_path: str, loss: Any, grad_h: Any, grad_w: Any) -> dict[str, float]:
    import torch

    ref = torch.load(ref_path, mmap=True)

    def rel(a: Any, b: Any) -> float:
        return float((a.double().cpu() - b).norm() / b.norm())

    return {
        "loss": float(loss),
        "loss_err": abs(float(loss) - float(ref["loss"])) / abs(float(ref["loss"])),
        "gh_err": rel(grad_h, ref["grad_h"]),
        "gw_err": rel(grad_w, ref["grad_w"]),
    }


def run_reference(shape: Shape, path: str) -> dict[str, Any]:
    """fp64 loss and gradients of the bf16 inputs, chunk by chunk (no autograd, no (N, V)
    tensor)."""
    import torch

    hidden, weight, labels = _inputs(shape, "cpu")
    h, w = hidden.double(), weight.double()  # (N, H), (V, H)
    grad_h = torch.empty_like(h)
    grad_w = torch.zeros_like(w)
    total = torch.zeros((), dtype=torch.float64)
    for s in range(0, shape.n, 256):
        z = h[s : s + 256] @ w.t()  # (c, V) fp64
        y = labels[s : s + 256, None]
        lse = torch.logsumexp(z, dim=1, keepdim=True)
        total += (lse - z.gather(1, y)).sum()
        p = (z - lse).exp_().scatter_add_(1, y, torch.full_like(lse, -1.0)).div_(shape.n)  # dL/dz
        grad_h[s : s + 256] = p @ w
        grad_w.addmm_(p.t(), h[s : s + 256])
    torch.save({"loss": total / shape.n, "grad_h": grad_h, "grad_w": grad_w}, path)
    return {"variant": "reference", "loss": float(total / shape.n)}


def worker(args: argparse.Namespace) -> None:
    import torch

    shape = SHAPES[args.shape]
    if args.n:
        shape = dataclasses.replace(shape, n=args.n)
    torch.manual_seed(0)
    if args.worker == "reference":
        print("RESULT " + json.dumps(run_reference(shape, args.ref)), flush=True)
    else:
        serve(args.worker, shape, device=args.device, chunk=args.chunk, ref=args.ref)


# ---------------------------------------------------------------- driver side


def _spawn(argv: list[str], timeout: float = 1800) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), *argv]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"error": " / ".join(tail) or f"exit {proc.returncode}"}


class _Worker:
    """A variant's process, driven line by line: one timed step per request."""

    def __init__(self, name: str, flags: list[str], tmp: str) -> None:
        self.name = name
        self.err_path = Path(tmp) / f"{name}.err"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, *flags]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
                cwd=ROOT,
            )
        self.error: str | None = None
        self.warmup = float("nan")
        self.times: list[float] = []
        self.peaks: list[int] = []

    def _expect(self, prefix: str) -> str | None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
        tail = self.err_path.read_text().strip().splitlines()[-2:]
        self.error = " / ".join(tail) or f"exit {self.proc.wait()}"
        return None

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.error = self.error or "worker exited"

    def ready(self) -> None:
        got = self._expect("READY ")
        if got is not None:
            self.warmup = float(got)

    def step(self) -> None:
        if self.error:
            return
        self._send("step")
        got = self._expect("STEP ")
        if got is not None:
            seconds, peak = got.split()
            self.times.append(float(seconds))
            self.peaks.append(int(peak))

    def finish(self) -> dict[str, Any]:
        row: dict[str, Any] = {"variant": self.name}
        if not self.error:
            self._send("done")
            got = self._expect("RESULT ")
            if got is not None:
                row.update(json.loads(got))
        self.proc.kill()
        self.proc.wait()
        if self.error:
            return {"variant": self.name, "error": self.error}
        row.update(times=self.times, peak=max(self.peaks), warmup=self.warmup)
        return row


def bench_shape(
    shape: Shape,
    *,
    variants: list[str],
    repeats: int | None,
    device: str,
    chunk: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Reference first; then every variant (and the bare GEMMs) warmed up in its own process,
    then timed in round-robin rounds, so load from other work falls on all of them alike."""
    flags = ["--shape", shape.name, "--device", device, "--chunk", str(chunk)]
    reps = repeats if repeats is not None else shape.repeats
    with tempfile.TemporaryDirectory() as tmp:
        ref = str(Path(tmp) / "ref.pt")
        t0 = time.perf_counter()
        reference = _spawn(["--worker", "reference", "--ref", ref, *flags])
        log(f"  fp64 reference: {time.perf_counter() - t0:.0f} s {reference.get('error', '')}")
        ref_flags = ["--ref", ref] if "error" not in reference else []
        workers = []
        for name in ["gemm", *variants]:
            t0 = time.perf_counter()
            w = _Worker(name, [*flags, *ref_flags], tmp)
            w.ready()
            workers.append(w)
            log(
                f"  {name}: started and warmed up in {time.perf_counter() - t0:.0f} s "
                f"{w.error or ''}"
            )
        for r in range(reps):
            t0 = time.perf_counter()
            for w in workers:
                w.step()
            log(f"  round {r + 1}/{reps}: {time.perf_counter() - t0:.0f} s")
        rows = [w.finish() for w in workers]
    gemm = rows.pop(0)
    if "times" in gemm:
        gemm["limit_s"] = statistics.median(gemm["times"])
    return {
        "shape": dataclasses.asdict(shape),
        "repeats": reps,
        "gemm": gemm,
        "rows": rows,
        "chunk": chunk,
    }


def _chunk_of(name: str, chunk: int) -> str:
    if name in ("chunked_upcast", "trl_1_13"):
        return str(TRL_CHUNK)
    if name in ("chunked_bf16_recompute", "ours", "ours_n8"):
        return str(chunk)
    return "-"


def _fmt_err(row: dict[str, Any], key: str) -> str:
    return f"{row[key]:.1e}" if key in row else "-"


def render_shape(res: dict[str, Any]) -> str:
    s = Shape(**res["shape"])
    gemm = res["gemm"]
    limit = gemm.get("limit_s", float("nan"))
    rate = s.flops / limit / 1e9
    mib = 2**20
    lines = [
        f"### {s.name}: N = {s.n:,}, H = {s.h:,}, V = {s.v:,}",
        "",
        f"6NHV = {s.flops / 1e9:,.0f} GFLOP; the three bf16 GEMMs alone take {limit:.3f} s here "
        f"(median; {rate:.0f} GFLOP/s): that is the compute limit. Times are medians of "
        f"{res['repeats']} "
        "round-robin rounds after one warm-up step each.",
        "",
        "| variant | C | median s | min s | x limit | GFLOP/s | peak MiB | peak - grads MiB | loss "
        "rel err | grad_h rel err | grad_W rel err | warm-up s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in res["rows"]:
        name = row["variant"]
        if "error" in row:
            lines.append(
                f"| {name} | {_chunk_of(name, res['chunk'])} | failed: {row['error'][:80]} |"
                + " |" * 9
            )
            continue
        med, best = statistics.median(row["times"]), min(row["times"])
        label = f"{name} (N = {row['n']:,})" if name == "ours_n8" else name
        flops = 6.0 * row["n"] * s.h * s.v
        lines.append(
            f"| {label} | {_chunk_of(name, res['chunk'])} | {med:.3f} | {best:.3f} | "
            f"{med / (limit * row['n'] / s.n):.2f} | {flops / med / 1e9:.0f} | "
            f"{row['peak'] / mib:,.0f} | "
            f"{(row['peak'] - row['grads_bytes']) / mib:,.0f} | "
            f"{_fmt_err(row, 'loss_err')} | {_fmt_err(row, 'gh_err')} | {_fmt_err(row, 'gw_err')} "
            f"| {row['warmup']:.1f} |"
        )
    lines += ["", *render_targets(res), ""]
    return "\n".join(lines)


def render_targets(res: dict[str, Any]) -> list[str]:
    """The issue's targets, judged on medians; the ratio of the best steps is shown beside."""
    rows = {r["variant"]: r for r in res["rows"] if "error" not in r}
    if "ours" not in rows:
        return ["(ours did not run: no targets to check)"]
    med = {k: statistics.median(r["times"]) for k, r in rows.items()}
    best = {k: min(r["times"]) for k, r in rows.items()}
    gemm = res["gemm"].get("times")
    if gemm:
        med["limit"], best["limit"] = statistics.median(gemm), min(gemm)
    mib = 2**20
    out = ["| target | median (best steps) | met |", "|---|---|---|"]

    def add(target: str, measured: str, ok: bool | None) -> None:
        out.append(
            f"| {target} | {measured} | {'n/a' if ok is None else 'yes' if ok else '**no**'} |"
        )

    def faster(other: str, target: str, factor: float) -> None:
        if other in rows:
            ratio = med[other] / med["ours"]
            add(target, f"{ratio:.2f}x ({best[other] / best['ours']:.2f}x)", ratio >= factor)

    faster("chunked_upcast", "ours >= 2.5x faster than the fp32-upcast chunked loss", 2.5)
    if "limit" in med:
        ratio = med["ours"] / med["limit"]
        add(
            "ours <= 1.3x the compute limit",
            f"{ratio:.2f}x ({best['ours'] / best['limit']:.2f}x)",
            ratio <= 1.3,
        )
    faster("trl_1_13", "ours faster than TRL 1.13's function", 1.0)
    faster("compile_naive", "ours faster than torch.compile of the naive loss", 1.0)
    if "trl_1_13" in rows:
        a, b = rows["ours"]["peak"], rows["trl_1_13"]["peak"]
        add("ours peak memory <= TRL 1.13's", f"{a / mib:,.0f} vs {b / mib:,.0f} MiB", a <= b)
    if "ours_n8" in rows:
        small, big = (rows[k]["peak"] - rows[k]["grads_bytes"] for k in ("ours_n8", "ours"))
        n_small, n_big = rows["ours_n8"]["n"], rows["ours"]["n"]
        measured = (
            f"{small / mib:,.0f} MiB at N = {n_small:,}, {big / mib:,.0f} MiB at N = {n_big:,}"
        )
        if (
            n_small < res["chunk"]
        ):  # N/8 fills less than one chunk: its workspace is smaller by design
            add(
                "ours peak memory flat as N grows 8x (peak minus grads)",
                measured + f"; N/8 < C = {res['chunk']}",
                None,
            )
        else:
            add(
                "ours peak memory flat as N grows 8x (peak minus grads)",
                measured,
                big <= 1.25 * small + 8 * mib,
            )
    return out


def machine(device: str) -> str:
    import torch

    cpu = "?"
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    try:
        from importlib.metadata import version

        trl = version("trl")
    except Exception:
        trl = "-"
    if torch.cuda.is_available() and device.startswith("cuda"):
        dev = torch.cuda.get_device_name()
    else:
        dev = (
            f"{cpu}, {os.cpu_count()} cores, {torch.get_num_threads()} threads, "
            f"{torch.backends.cpu.get_cpu_capability()}"
        )
    return f"{dev}; torch {torch.__version__}, trl {trl}, Python {platform.python_version()}"


def render(results: list[dict[str, Any]], command: str, minutes: float, device: str) -> str:
    when = datetime.date.today().isoformat()
    head = [
        "## Loss",
        "",
        f"`{command}` ({when}, {minutes:.1f} min). Machine: {machine(device)}.",
        "Each variant ran in its own process; ratios are from this one run (other work may have",
        "shared the machine). Peak = the process's memory high-water rise during the timed steps",
        '(gradients included); "peak - grads" takes out the gradient tensors every variant must',
        "return. Errors are relative (L2 for gradients) against fp64 math on the same bf16 inputs.",
        "",
        "Variants:",
        "",
        *[f"* `{k}`: {v}" for k, v in VARIANTS.items()],
        "",
        "What separates them: `ours` does the minimum work, 6NHV (per chunk: logits, then",
        "grad_hidden and grad_weight GEMMs during the forward, grad_weight accumulated in place",
        "into the one buffer that becomes `weight.grad`); "
        "fp32 is used only for a block of rows at a",
        "time, in a reused buffer. `chunked_bf16_recompute` is the same loss with the other "
        "backward",
        "strategy (checkpointing: 8NHV), the measurement behind the choice. TRL 1.13 also",
        "recomputes (8NHV), adds argmax and entropy passes over every chunk, and autograd adds a",
        "(V, H) partial gradient per chunk. `compile_naive` runs the same three GEMMs on full bf16",
        "logits with fused elementwise kernels, and keeps the (N, V) logits alive. On a busy "
        "machine",
        "many small parallel regions suffer more from thread stragglers than a few big fused",
        "kernels, which is why the best-step ratios are shown beside the medians.",
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(render_shape(r) for r in results)


def write_section(doc: Path, section: str) -> None:
    """Replace the `## Loss` section of ``doc`` (or append one), leaving other sections alone."""
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\n"
    pattern = re.compile(r"^## Loss\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip() + "\n\n", text)
    else:
        text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text.rstrip() + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--shapes", default="small,release,long", help="comma-separated: " + ",".join(SHAPES)
    )
    p.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="comma-separated subset of " + ",".join(VARIANTS),
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed steps per variant (default: per shape, 2-3)",
    )
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument(
        "--chunk", type=int, default=0, help="our chunk size (default: auto_chunk_size(V))"
    )
    p.add_argument(
        "--output", type=Path, default=DOC, help="markdown file whose `## Loss` section is replaced"
    )
    p.add_argument("--no-write", action="store_true", help="print the section, write nothing")
    p.add_argument("--json", type=Path, default=None, help="also save the raw results here")
    p.add_argument(
        "--render", type=Path, default=None, help="render saved raw results instead of running"
    )
    # worker-only flags
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--shape", help=argparse.SUPPRESS)
    p.add_argument("--ref", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return
    if args.render:
        saved = json.loads(args.render.read_text())
        _emit(render(saved["results"], saved["command"], saved["minutes"], saved["device"]), args)
        return
    started = time.perf_counter()
    results = []
    for name in args.shapes.split(","):
        shape = SHAPES[name]
        chunk = args.chunk or _auto_chunk(shape.v)
        print(f"{name}: N={shape.n} H={shape.h} V={shape.v} C={chunk}", file=sys.stderr, flush=True)
        results.append(
            bench_shape(
                shape,
                variants=args.variants.split(","),
                repeats=args.repeats,
                device=args.device,
                chunk=chunk,
                log=lambda m: print(m, file=sys.stderr, flush=True),
            )
        )
    command = "python benchmarks/loss.py " + " ".join(argv if argv is not None else sys.argv[1:])
    minutes = (time.perf_counter() - started) / 60
    if args.json:
        raw = {
            "results": results,
            "command": command.strip(),
            "minutes": minutes,
            "device": args.device,
        }
        args.json.write_text(json.dumps(raw, indent=1))
    _emit(render(results, command.strip(), minutes, args.device), args)


def _emit(section: str, args: argparse.Namespace) -> None:
    print(section)
    if not args.no_write:
        write_section(args.output, section)
        print(f"wrote the Loss section of {args.output}", file=sys.stderr)


def _auto_chunk(vocab: int) -> int:
    sys.path.insert(0, str(ROOT))
    from migrate.reference.loss import auto_chunk_size

    return auto_chunk_size(vocab)


if __name__ == "__main__":
    main()
