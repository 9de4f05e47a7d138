"""The rules, one module (or package) each, named as the rule. Importing this package imports
every one of them, and each registers itself with `codemods.base.Rule` under its code."""

from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    importlib.import_module(f"{__name__}.{_info.name}")
