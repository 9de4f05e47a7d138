"""Tests of trl-migrate compat."""
