"""trl-migrate: move PPO-era TRL code, pins and environments to TRL 1.13."""

__version__ = "0.1.0"
