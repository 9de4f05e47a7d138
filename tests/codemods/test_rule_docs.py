"""Every rule is documented and its own before/after example is true."""

from __future__ import annotations

import pathlib
import re

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
