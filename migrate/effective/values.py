"""Values the checker's two sides share."""

from __future__ import annotations

from typing import Any

UNKNOWN: Any = "<not a literal>"
