"""TRL111 helper-kwargs: no-op, fix and TODO cases, exact text, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL111",)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "y = tokenizer.apply_chat_template(messages, tokenize=False)\n",
            id="tokenizer-method",
        ),
        pytest.param(
            "from trl import apply_chat_template\n"
            'ds = ds.map(apply_chat_template, fn_kwargs={"processing_class": tok})\n',
            id="already-1.13",
        ),
        pytest.param(
            "from mylib import apply_chat_template\n"
            "x = apply_chat_template(example, tokenizer=tok)\n",
            id="not-trl",
        ),
        pytest.param(
            "from trl import apply_chat_template\nx = apply_chat_template(example, tok)\n",
            id="positional",
        ),
        pytest.param(
            "from trl import apply_chat_template\n"
            'ds = ds.map(tokenize, fn_kwargs={"tokenizer": tok})\n',
            id="another-mapped-function",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from trl import apply_chat_template
            ds = ds.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer})
            """,
            """
            from trl import apply_chat_template
            ds = ds.map(apply_chat_template, fn_kwargs={"processing_class": tokenizer})
            """,
            id="map-fn-kwargs",
        ),
        pytest.param(
            """
            import trl
            ds = ds.map(trl.maybe_apply_chat_template, num_proc=4, fn_kwargs=dict(tokenizer=tok))
            """,
            """
            import trl
            ds = ds.map(trl.maybe_apply_chat_template, num_proc=4, fn_kwargs=dict(processing_class=tok))
            """,
            id="map-dict-call",
        ),
        pytest.param(
            """
            from trl.data_utils import maybe_apply_chat_template
            ds = ds.map(function=maybe_apply_chat_template, fn_kwargs={'tokenizer': tok, 'tools': tools})
            """,
            """
            from trl.data_utils import maybe_apply_chat_template
            ds = ds.map(function=maybe_apply_chat_template, fn_kwargs={'processing_class': tok, 'tools': tools})
            """,
            id="map-function-keyword",
        ),
        pytest.param(
            """
            from trl import apply_chat_template
            x = apply_chat_template(example, tokenizer=tok)
            """,
            """
            from trl import apply_chat_template
            x = apply_chat_template(example, processing_class=tok)
            """,
            id="direct-call",
        ),
        pytest.param(
            """
            import functools
            from trl import apply_chat_template
            f = functools.partial(apply_chat_template, tokenizer=tok)
            """,
            """
            import functools
            from trl import apply_chat_template
            f = functools.partial(apply_chat_template, processing_class=tok)
            """,
            id="partial",
        ),
    ],
)
def test_fix(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert [f.code for f in findings] == ["TRL111"]
    assert findings[0].fix is Fix.APPLIED
    assert "`processing_class` since TRL 1.3" in findings[0].message


def test_fn_kwargs_built_elsewhere_gets_a_todo():
    src = dedent(
        """
        from trl import apply_chat_template
        kw = {"tokenizer": tok}
        ds = ds.map(apply_chat_template, fn_kwargs=kw)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == src.replace(
        "ds = ds.map",
        "# TODO(trl-migrate TRL111): `fn_kwargs` hands `apply_chat_template` its keywords from a "
        "value built elsewhere: rename its `tokenizer` key to `processing_class` (TRL 1.3 "
        "renamed the parameter and kept no alias)\nds = ds.map",
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    again, _ = run(out, select=SELECT)
    assert again == out
