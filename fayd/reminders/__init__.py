"""Reminders, timers and medication check-ins: their rules and next occurrences, their rows
in SQLite, the book that keeps them and the scheduler that fires them (docs/reminders.md).
What is said and where is the agent's (``fayd.agent.announce``)."""

from fayd.reminders.book import BadReminder, ReminderBook
from fayd.reminders.clock import Clock, SystemClock
from fayd.reminders.rules import Rule, next_occurrence
from fayd.reminders.scheduler import Scheduler

__all__ = [
    "BadReminder",
    "Clock",
    "ReminderBook",
    "Rule",
    "Scheduler",
    "SystemClock",
    "next_occurrence",
]
