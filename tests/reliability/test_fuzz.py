"""Bad input, generated: Python sources with TRL imports in odd places, odd encodings and line
ends, byte-level corruption of real scripts, broken notebooks and broken manifests.

The properties: the engine and `compat.api.check_path` never raise; a failure carries a message;
a rewrite decodes with the original's encoding, keeps its line ends, parses (libcst, and `ast`
when the original did), and a second pass proposes nothing; a file on disk is its old bytes or
a rewrite that reads back. In CI the example counts are bounded and derandomized; set
TRL_MIGRATE_FUZZ_SCALE=N (what `python benchmarks/corpus.py fuzz` does) for N times more, random.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codemods
from codemods.base import Options
from codemods.engine import needs_parse, process
from migrate import api
from migrate.kernel.files import SourceError, decode_python
from migrate.kernel.findings import Status

CODES = tuple(r.code for r in codemods.RULES)
ROOT = Path(__file__).resolve().parents[2]
SCALE = int(os.environ.get("TRL_MIGRATE_FUZZ_SCALE", "1"))


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=SCALE == 1,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


# -- generated Python sources ----------------------------------------------------------------
IMPORTS = [
    "from trl import AutoModelForCausalLMWithValueHead",
    "from trl import AutoModelForCausalLMWithValueHead as VH",
    "from trl import (\n    AutoModelForCausalLMWithValueHead,  # value head\n    PPOConfig,\n)",
    "from trl import \\\n    AutoModelForSeq2SeqLMWithValueHead",
    "import trl",
    "import trl as t",
    "import os, trl",
    "import trl.core",
    "from trl import *",
    "from trl import PPOConfig, PPOTrainer",
    "from trl import PPOv2Config, PPOv2Trainer",
    "from trl.trainer.ppov2_trainer import PPOv2Config, PPOv2Trainer",
    "from trl.experimental.ppo import PPOConfig, PPOTrainer",
    "from trl.core import LengthSampler, respond_to_batch",
    "from trl.models import create_reference_model",
    "from trl.trainer.utils import SIMPLE_QUERY_CHAT_TEMPLATE",
    "from trl import GRPOConfig, GRPOTrainer",
    "from . import trl_helpers",
    "import ctrl",
]
USES = [
    "m = AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')",
    "m = VH.from_pretrained(path, torch_dtype=dtype)",
    "m = trl.AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')",
    "m = t.AutoModelForSeq2SeqLMWithValueHead.from_pretrained('t5-small')",
    "config = PPOConfig(learning_rate=1.41e-5, batch_size=8, mini_batch_size=2, init_kl_coef=0.2)",
    "config = PPOConfig(\n    output_dir='out',\n    kl_coef=0.05,\n    num_ppo_epochs=2,\n)",
    "config = PPOv2Config(output_dir='o', total_episodes=10)",
    "trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)",
    (
        "trainer = PPOTrainer(args=config, processing_class=tok, model=policy, ref_model=ref,\n"
        "    reward_model=rm, value_model=vm, train_dataset=ds)"
    ),
    "stats = trainer.step(queries, responses, rewards)",
    "for batch in trainer.dataloader:\n    stats = trainer.step(q, r, s)\n    trainer.log_stats(stats, batch, r)",
    "trainer.train()",
    "sampler = LengthSampler(4, 16)",
    "ref = create_reference_model(model)",
    "x = trl.__version__",
    "print('trl is great')  # trl",
]
NOISE = [
    "x = 1",
    "def helper(a, *, b=2):\n    return a + b",
    "class Thing:\n    value: int = 0",
    "s = 'caf\u00e9'",
    "y = [i for i in range(3) if i]",
    "async def go():\n    await thing()",
    "if (n := 3) > 2:\n    pass",
    "match command:\n    case [x, y]:\n        pass\n    case _:\n        pass",
    "z = f'{x!r:>{10}}'",
    "w = lambda: (yield)",
    "@decorator\ndef decorated():\n    ...",
    "# a comment mentioning trl.PPOTrainer",
    "t_ = '''multi\nline trl string'''",
]


def _indent(text: str, unit: str) -> str:
    return "\n".join(unit + line if line else line for line in text.split("\n"))


@st.composite
def statements(draw: st.DrawFn) -> str:
    stmt = draw(st.sampled_from(IMPORTS + USES + NOISE))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    single = "\n" not in stmt
    places = ["top", "def", "class", "try", "if", "with", "comment"] + (
        ["oneline", "semicolon"] if single else []
    )
    place = draw(st.sampled_from(places))
    if place == "def":
        return "def f():\n" + _indent(stmt, unit)
    if place == "class":
        return "class C:\n" + _indent(stmt, unit)
    if place == "try":
        return "try:\n" + _indent(stmt, unit) + "\nexcept ImportError:\n" + unit + "pass"
    if place == "if":
        return "if TYPE_CHECKING:\n" + _indent(stmt, unit)
    if place == "with":
        return "with ctx() as c:\n" + _indent(stmt, unit)
    if place == "comment":
        return "# -- section --\n" + stmt + "  # trailing"
    if place == "oneline":
        return "if True: " + stmt
    if place == "semicolon":
        return "import os; " + stmt
    return stmt


ENCODINGS = [
    ("utf-8", ""),
    ("utf-8-sig", ""),
    ("utf-8", "# -*- coding: utf-8 -*-\n"),
    ("latin-1", "# -*- coding: latin-1 -*-\n"),
    ("cp1252", "# vim: set fileencoding=cp1252 :\n"),
    ("utf-8", "#!/usr/bin/env python\n# coding=utf8\n"),
]


@st.composite
def python_files(draw: st.DrawFn) -> bytes:
    body = "\n".join(draw(st.lists(statements(), min_size=1, max_size=6)))
    codec, cookie = draw(st.sampled_from(ENCODINGS))
    text = cookie + body + draw(st.sampled_from(["\n", "", "\n\n", "  \n", "\n# end"]))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if newline == "mixed":
        lines = text.split("\n")
        ends = draw(
            st.lists(
                st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines)
            )
        )
        text = "".join(line + end for line, end in zip(lines[:-1], ends)) + lines[-1]
    else:
        text = text.replace("\n", newline)
    return text.encode(codec)


def _newlines(text: str) -> set[str]:
    crlf = text.count("\r\n")
    found = set()
    if crlf:
        found.add("\r\n")
    if text.count("\r") > crlf:
        found.add("\r")
    if text.count("\n") > crlf:
        found.add("\n")
    return found


def check_engine(data: bytes, display: str = "fuzz.py") -> Status:
    """Every property of one engine run on `data`; returns the status for statistics."""
    result = process(display, data, codes=CODES, options=Options())
    assert isinstance(result.status, Status)
    if result.status is Status.FAILED:
        assert result.message, "a failure must say why"
        assert not result.message.startswith("internal error"), result.message
        assert result.new is None
        return result.status
    if result.status is not Status.CHANGED:
        assert result.new is None
        return result.status
    assert result.new is not None and result.new != data
    old, new = decode_python(data), decode_python(result.new)
    assert new.encoding == old.encoding
    cst.parse_module(new.text)
    try:
        ast.parse(old.text)
    except (SyntaxError, ValueError):
        pass
    else:
        ast.parse(new.text)
    if len(_newlines(old.text)) == 1:  # one style: kept everywhere, the last line end too
        assert _newlines(new.text) <= _newlines(old.text), "line ends changed"
        if old.text.endswith(("\n", "\r")) and new.text:
            assert new.text.endswith(old.text[-1]), "final line end lost"
    again = process(display, result.new, codes=CODES, options=Options())
    assert again.status is Status.UNCHANGED, f"second pass: {again.status} {again.message}"
    return result.status


@fuzz_settings(40)
@given(python_files())
def test_generated_sources(data):
    check_engine(data)
    # The prefilter may let through files that do not use trl, never skip one that imports it.
    try:
        tree = ast.parse(decode_python(data).text)
    except (SyntaxError, ValueError, SourceError):
        return
    imports_trl = any(
        (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "trl" for a in n.names))
        or (
            isinstance(n, ast.ImportFrom)
            and n.level == 0
            and (n.module or "").split(".")[0] == "trl"
        )
        for n in ast.walk(tree)
    )
    if imports_trl:
        assert needs_parse(data), "the prefilter skipped a file that imports trl"


# -- corrupted real scripts ------------------------------------------------------------------
SEEDS = sorted((ROOT / "tests" / "fixtures" / "eras").glob("*.py")) + sorted(
    (ROOT / "tests" / "fixtures" / "eras" / "expected").rglob("*.py")
)
JUNK = [
    b"\x00",
    b"\xff\xfe",
    b"\r",
    b"\n",
    b"\r\n",
    b"(",
    b")",
    b"'",
    b'"""',
    b"\\",
    b"\t",
    b"    ",
    b"trl",
    b"import trl\n",
    b"\xef\xbb\xbf",
    b"# -*- coding: latin-1 -*-\n",
    b"# coding: bogus\n",
    b"\xe9",
    b"\x0c",
    b"def",
    b":",
    b"#",
    b"\x1a",
]


@st.composite
def corrupted(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "delete", "insert", "flip", "duplicate"]))
        at = draw(st.integers(0, len(data)))
        if op == "truncate":
            del data[at:]
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif op == "insert":
            data[at:at] = draw(st.one_of(st.sampled_from(JUNK), st.binary(min_size=1, max_size=8)))
        elif op == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
    return bytes(data)


SEED_BYTES = [p.read_bytes() for p in SEEDS]


@pytest.mark.skipif(not SEED_BYTES, reason="era fixtures missing")
@fuzz_settings(60)
@given(corrupted(SEED_BYTES or [b""]))
def test_corrupted_scripts(data):
    check_engine(data)


@fuzz_settings(15)
@given(st.one_of(python_files(), corrupted(SEED_BYTES or [b"import trl\n"])))
def test_on_disk_a_file_is_old_bytes_or_a_rewrite_that_reads_back(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.py"
        path.write_bytes(data)
        report = api.fix_paths([str(path)], jobs=1)
        [result] = report.results
        now = path.read_bytes()
        if result.status is Status.CHANGED:
            assert now == result.new
            cst.parse_module(decode_python(now).text)
        else:
            assert now == data
        assert sorted(p.name for p in Path(folder).iterdir()) == ["script.py"]


# -- notebooks ---------------------------------------------------------------------------------
CELL_LINES = [
    "%pip install -q trl==0.11.4",
    "!ls",
    "import trl",
    "from trl import AutoModelForCausalLMWithValueHead",
    "m = AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')",
    "%%time",
    "x = !pwd",
    "model?",
    "from trl import PPOConfig",
    "config = PPOConfig(batch_size=8)",
    "print('caf\u00e9')",
    "    indented",
]


@st.composite
def notebooks(draw: st.DrawFn) -> bytes:
    cells = []
    for _ in range(draw(st.integers(0, 4))):
        lines = draw(st.lists(st.sampled_from(CELL_LINES), min_size=0, max_size=4))
        source: object = [line + "\n" for line in lines[:-1]] + lines[-1:]
        if draw(st.booleans()):
            source = "".join(source)  # type: ignore[arg-type]
        kind = draw(st.sampled_from(["code", "code", "markdown", "raw"]))
        cell: dict[str, object] = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    language = draw(st.sampled_from(["python", "python", "R", None]))
    meta = {"kernelspec": {"language": language, "name": "k"}} if language else {}
    doc = {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}
    indent = draw(st.sampled_from([1, 2, None]))
    text = json.dumps(
        doc, indent=indent, sort_keys=draw(st.booleans()), ensure_ascii=draw(st.booleans())
    )
    text += draw(st.sampled_from(["\n", ""]))
    data = text.encode()
    if draw(st.booleans()):
        data = draw(corrupted([data]))
    return data


@fuzz_settings(60)
@given(notebooks())
def test_notebooks(data):
    result = process("fuzz.ipynb", data, codes=CODES, options=Options())
    if result.status is Status.FAILED:
        assert result.message and not result.message.startswith("internal error"), result.message
    if result.status is not Status.CHANGED:
        assert result.new is None
        return
    assert result.new is not None
    doc = json.loads(result.new.decode("utf-8-sig"))
    assert isinstance(doc.get("cells"), list)
    again = process("fuzz.ipynb", result.new, codes=CODES, options=Options())
    assert again.status is Status.UNCHANGED, f"second pass: {again.status} {again.message}"


# -- manifests (compat) ------------------------------------------------------------------------
MANIFESTS = sorted(p for p in (ROOT / "tests" / "compat" / "fixtures").rglob("*") if p.is_file())


@st.composite
def manifests(draw: st.DrawFn) -> tuple[str, bytes]:
    seed = draw(st.sampled_from(MANIFESTS))
    data = seed.read_bytes()
    if draw(st.integers(0, 4)):  # mostly corrupted, sometimes intact
        data = draw(corrupted([data]))
    return seed.name, data


@pytest.mark.skipif(not MANIFESTS, reason="compat fixtures missing")
@fuzz_settings(150)
@given(manifests(), st.booleans())
def test_manifests(manifest, fix):
    from compat.api import check_path
    from compat.sources import format_of

    name, data = manifest
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        report = check_path(folder, installed=False, fix=fix)
        for result in report.results:
            assert isinstance(result.status, Status)
            if result.status is Status.FAILED:
                assert result.message, "a failure must say why"
        now = path.read_bytes()
        if now != data:
            assert fix, "a check without --fix wrote a file"
            again = check_path(folder, installed=False, fix=False)
            mine = [r for r in again.results if Path(r.path).name == name]
            assert all(r.status is not Status.FAILED for r in mine), [r.message for r in mine]
        if format_of(str(path)) is None:
            assert now == data
