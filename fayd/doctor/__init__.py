"""``fayd doctor``: is this install sound? One line per check, each ok, warn or fail, with
what to do when it is not ok (docs/doctor.md)."""

from fayd.doctor.checks import Check, run_checks

__all__ = ["Check", "run_checks"]
