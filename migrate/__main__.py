"""`python -m migrate` is the `trl-migrate` command."""

from migrate.cli import main

if __name__ == "__main__":
    main()
