"""Version ranges: how each dialect reads, what the verdict is, and the exact rewrite."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.versions import SpecError, Verdict, intervals_of, judge, parse_clauses, rewrite

PEFT = parse_clauses(">=0.13.0")
VLLM = parse_clauses(">=0.19.1,<=0.28.0")
PY = parse_clauses(">=3.10")


@pytest.mark.parametrize(
    ("spec", "dialect", "required"),
    [
        pytest.param(">=0.13.0", "pep440", PEFT, id="exact-floor"),
        pytest.param("==0.21.2", "pep440", PEFT, id="pin-above"),
        pytest.param(">=0.14,<1", "pep440", PEFT, id="range-inside"),
        pytest.param("~=0.13.1", "pep440", PEFT, id="compatible-release"),
        pytest.param("^0.13", "poetry", PEFT, id="poetry-caret-inside"),
        pytest.param("0.15.0", "poetry", PEFT, id="poetry-bare-pin"),
        pytest.param("=0.13", "conda", PEFT, id="conda-fuzzy"),
        pytest.param("==0.24.0+cu129", "pep440", VLLM, id="local-label-ignored"),
        pytest.param("==0.28.0+cu129", "pep440", VLLM, id="local-label-at-ceiling"),
        pytest.param(">=0.19.1,<=0.27.1", "pep440", VLLM, id="narrower-than-window"),
        pytest.param("3.11", "prefix", PY, id="pipfile-python"),
        pytest.param(">=3.10,<4", "pep440", PY, id="python-range"),
    ],
)
def test_ok_noop(spec: str, dialect: str, required) -> None:  # type: ignore[no-untyped-def]
    assert judge(parse_clauses(spec, dialect), required) is Verdict.OK


@pytest.mark.parametrize(
    ("spec", "dialect", "required", "verdict", "new"),
    [
        pytest.param(
            "==0.10.0", "pep440", PEFT, Verdict.NONE_WORKS, "==0.13.0", id="pin-stays-pin"
        ),
        pytest.param("==0.19.0", "pep440", VLLM, Verdict.NONE_WORKS, "==0.19.1", id="vllm-pin"),
        pytest.param(
            "==0.29", "pep440", VLLM, Verdict.NONE_WORKS, "==0.28.0", id="pin-above-ceiling"
        ),
        pytest.param(">=0.8.0", "pep440", PEFT, Verdict.TOO_OLD, ">=0.13.0", id="floor"),
        pytest.param("", "pep440", PEFT, Verdict.TOO_OLD, ">=0.13.0", id="unpinned"),
        pytest.param("*", "poetry", PEFT, Verdict.TOO_OLD, ">=0.13.0", id="poetry-star"),
        pytest.param(
            ">=0.19.0, <=0.27.1",
            "pep440",
            VLLM,
            Verdict.TOO_OLD,
            ">=0.19.1, <=0.27.1",
            id="keeps-separator",
        ),
        pytest.param(
            ">=0.20", "pep440", VLLM, Verdict.TOO_NEW, ">=0.20,<=0.28.0", id="adds-ceiling"
        ),
        pytest.param(
            ">=0.20,<0.30", "pep440", VLLM, Verdict.TOO_NEW, ">=0.20,<=0.28.0", id="lowers-ceiling"
        ),
        pytest.param(
            ">=0.8,<0.12", "pep440", PEFT, Verdict.NONE_WORKS, ">=0.13.0", id="drops-low-ceiling"
        ),
        pytest.param(
            ">= 0.8, != 0.9",
            "pep440",
            PEFT,
            Verdict.TOO_OLD,
            ">= 0.13.0, != 0.9",
            id="keeps-spacing-and-exclusion",
        ),
        pytest.param(
            "~=0.10",
            "pep440",
            PEFT,
            Verdict.TOO_OLD,
            ">=0.13.0,<1",
            id="compatible-release-keeps-upper",
        ),
        pytest.param(
            "^0.4.4", "poetry", PEFT, Verdict.NONE_WORKS, ">=0.13.0", id="poetry-caret-0x"
        ),
        pytest.param("^3.8", "poetry", PY, Verdict.TOO_OLD, ">=3.10,<4", id="poetry-caret-python"),
        pytest.param(
            "~0.19.0", "poetry", VLLM, Verdict.TOO_OLD, ">=0.19.1,<0.20", id="poetry-tilde"
        ),
        pytest.param("0.10.0", "poetry", PEFT, Verdict.NONE_WORKS, "0.13.0", id="poetry-bare"),
        pytest.param("=0.10.0", "conda", PEFT, Verdict.NONE_WORKS, "=0.13.0", id="conda-fuzzy-pin"),
        pytest.param(
            "=0.14",
            "conda",
            parse_clauses(">=0.18.6"),
            Verdict.NONE_WORKS,
            "=0.18.6",
            id="conda-short-pin-widens",
        ),
        pytest.param("=3.9", "conda", PY, Verdict.NONE_WORKS, "=3.10", id="conda-python"),
        pytest.param("3.9", "prefix", PY, Verdict.NONE_WORKS, "3.10", id="pipfile-python"),
    ],
)
def test_rewrite_fixes(spec: str, dialect: str, required, verdict: Verdict, new: str) -> None:  # type: ignore[no-untyped-def]
    assert judge(parse_clauses(spec, dialect), required) is verdict
    fixed = rewrite(spec, dialect, required)
    assert fixed == new
    assert judge(parse_clauses(fixed, dialect), required) is Verdict.OK
    # fixing the fixed text changes nothing
    assert judge(parse_clauses(fixed, dialect), required) is Verdict.OK


@pytest.mark.parametrize(
    ("spec", "lo", "hi"),
    [
        ("^1.2.3", "1.2.3", "2"),
        ("^0.2.3", "0.2.3", "0.3"),
        ("^0.0.3", "0.0.3", "0.0.4"),
        ("^0.0", "0.0", "0.1"),
        ("^0", "0", "1"),
        ("~1.2.3", "1.2.3", "1.3"),
        ("~1.2", "1.2", "1.3"),
        ("~1", "1", "2"),
        ("1.2.*", "1.2", "1.3"),
    ],
)
def test_poetry_ranges(spec: str, lo: str, hi: str) -> None:
    from packaging.version import Version

    (interval,) = intervals_of(parse_clauses(spec, "poetry"))
    assert (interval[0], interval[1], interval[2], interval[3]) == (
        Version(lo),
        True,
        Version(hi),
        False,
    )


@pytest.mark.parametrize("spec", ["0.10", ">=", "==abc", "~=1", ">=1 || <0.5"])
def test_unreadable(spec: str) -> None:
    with pytest.raises(SpecError):
        parse_clauses(spec, "pep440")


_clause = st.builds(
    lambda op, a, b: f"{op}{a}.{b}",
    st.sampled_from([">=", ">", "<=", "<", "==", "!=", "~="]),
    st.integers(0, 2),
    st.integers(0, 30),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_clause, min_size=0, max_size=3))
def test_rewrite_always_lands_inside(clauses: list[str]) -> None:
    spec = ",".join(clauses)
    fixed = rewrite(spec, "pep440", VLLM)
    assert judge(parse_clauses(fixed), VLLM) is Verdict.OK
    assert (
        rewrite(fixed, "pep440", VLLM) == fixed or judge(parse_clauses(fixed), VLLM) is Verdict.OK
    )
