"""`python -m migrate.effective SCRIPT.py [--target rloo|grpo]`."""

from migrate.effective import main

raise SystemExit(main())
