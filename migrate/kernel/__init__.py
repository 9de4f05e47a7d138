"""The kernel every job stands on: findings and results, safe file I/O, notebooks, the file walk
and the codes of every job. It imports nothing else of the project (import-linter checks it)."""
