"""The platform's fixtures (a fresh store on SQLite and PostgreSQL, a clock the test moves)."""

from tests.platform.conftest import clock, config, platform

__all__ = ["clock", "config", "platform"]
