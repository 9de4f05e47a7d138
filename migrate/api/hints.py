"""What the rewrite's tables know about a smoke crash they did not prevent: a keyword that
TRL 1.13's stack no longer accepts, passed where the rewrite could not see it (a dict a helper
builds and hands over as `**kwargs`, a file that does not use TRL). The smoke stage reports the
TypeError; this adds what the drift table (codemods/data/drift.json) says became of the
keyword, so the user learns the fix where the run stopped."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from codemods.rules.drift import config_fields, removed, sentence, table

# `TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'`
_UNEXPECTED = re.compile(r"(\w+)\.__init__\(\) got an unexpected keyword argument '(\w+)'")


_SAID = "; TRL 1.13's stack no longer takes it: "


def keyword_drift(cls: str, keyword: str) -> str:
    """What became of `keyword` of class `cls` in TRL 1.13's stack ('' when the tables do not
    list it for that class)."""
    row = config_fields().get(cls, {}).get(keyword)
    if row is not None:
        to = f" (it is `{row['to']}` now)" if row.get("to") else ""
        return f"{removed(cls, keyword, row)}{to}: {sentence(row['do'])}"
    entry = table()["keywords"].get(keyword)
    if not isinstance(entry, dict):
        return ""
    if not any(_names(callee, cls) for callee in entry.get("callees", [])):
        return ""
    to = f" (it is `{entry['to']}` now)" if entry.get("to") else ""
    return f"`{keyword}`{to}: {sentence(entry['why'])}"


def _names(callee: str, cls: str) -> bool:
    """Whether a callee pattern of the table (`transformers.TrainingArguments`, `trl.*Config`)
    can be class `cls`."""
    last = callee.rpartition(".")[2]
    if "*" in last:
        return re.fullmatch(re.escape(last).replace(r"\*", r"\w*"), cls) is not None
    return last == cls


def explain(result: Any) -> Any:
    """`result` (a SmokeResult) with its crash finding extended by what the tables say of the
    keyword the crash names, when they say anything."""
    for i, f in enumerate(result.findings):
        found = _UNEXPECTED.search(f.message) if f.code == "TRL412" else None
        if found is None or _SAID in f.message:
            continue
        said = keyword_drift(found.group(1), found.group(2))
        if said:
            message = f"{f.message}{_SAID}{said}"
            result.findings[i] = dataclasses.replace(f, message=message)
    return result
