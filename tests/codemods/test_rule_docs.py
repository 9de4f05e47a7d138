"""Every rule is documented and its own before/after example is true."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

import codemods
from tests.codemods.helpers import assert_fixes

DOCS = (pathlib.Path(__file__).parents[2] / "docs" / "rules.md").read_text()


@pytest.mark.parametrize("rule", codemods.RULES, ids=lambda r: r.code)
def test_example_is_what_the_rule_does(rule):
    assert_fixes(rule.before, rule.after, select=(rule.code,))


@pytest.mark.parametrize("rule", codemods.RULES, ids=lambda r: r.code)
def test_rule_has_a_docs_section(rule):
    assert re.search(rf"^## {rule.code} `{rule.name}`", DOCS, re.M), (
        f"docs/rules.md lacks a section for {rule.code}"
    )


def test_codes_are_unique_and_well_formed():
    codes = [r.code for r in codemods.RULES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"TRL1\d\d", c) for c in codes)
    assert [r.code for r in codemods.RULES] == sorted(codes)


@pytest.mark.parametrize("rule", codemods.RULES, ids=lambda r: r.code)
def test_rule_has_its_module_test_file_and_docstring(rule):
    # Adding a rule touches its module, its test file and its docs section, and nothing else:
    # the registry finds it (codemods/rules/__init__.py), the name comes from the module.
    module = type(rule).__module__
    assert module == f"codemods.rules.{rule.name.replace('-', '_')}", module
    tests = pathlib.Path(__file__).parent / f"test_{rule.name.replace('-', '_')}.py"
    assert tests.is_file(), f"{rule.code} has no {tests.name}"
    assert (sys.modules[module].__doc__ or "").startswith(rule.code), f"{module} docstring"
    for transformer in rule.transformers:
        assert rule.code == transformer.CODE


def test_a_second_rule_with_a_taken_code_is_refused():
    from codemods.base import Rule

    with pytest.raises(TypeError, match="TRL101 is already codemods.rules.imports's"):
        type("Clash", (Rule,), {"code": "TRL101", "transformers": (), "__module__": "x.clash"})
    assert Rule.registry["TRL101"].__module__ == "codemods.rules.imports"


@pytest.mark.parametrize("code", ["TRL102", "TRL103", "TRL104", "TRL105", "TRL106"])
def test_each_rule_that_changes_training_says_what_it_carries_and_reports(code):
    """The rules whose rewrites change what a run trains with list, in their own section, the
    settings they carry over and those they report (#14)."""
    start = re.search(rf"^## {code} ", DOCS, re.M)
    assert start is not None
    end = re.search(r"^## ", DOCS[start.end() :], re.M)
    section = DOCS[start.end() : start.end() + end.start() if end else len(DOCS)]
    match = re.search(
        r"^### Settings carried over, and settings reported\n(.*?)(?=^##|\Z)", section, re.M | re.S
    )
    assert match is not None, f"{code}'s section lists no settings"
    rows = [ln for ln in match.group(1).splitlines() if ln.startswith("| ") and "---" not in ln]
    findings = ("report", "warning", "TODO")
    assert len(rows) >= 4 and any(any(w in r for w in findings) for r in rows)
    assert any(w in r for r in rows for w in ("carried", "written", "kept"))
