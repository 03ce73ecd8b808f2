"""Eldercare that watches over (SPEC §7, docs/care.md): rules evaluated without an LLM,
alerts that escalate from a spoken check-in to caregivers in order, notifications through
Apprise. Plain rules and evaluation in ``rules``/``evaluate``; the one supervised task in
``engine``; what leaves fayd in ``effects`` and ``notify``; the ports it needs in ``ports``."""

from fayd.care.effects import Effects
from fayd.care.engine import CareEngine
from fayd.care.notify import AppriseDeliver
from fayd.care.ports import Announcer, Asker, Deliver, Publisher
from fayd.care.rules import CareError, Rule

__all__ = [
    "Announcer",
    "AppriseDeliver",
    "Asker",
    "CareEngine",
    "CareError",
    "Deliver",
    "Effects",
    "Publisher",
    "Rule",
]
