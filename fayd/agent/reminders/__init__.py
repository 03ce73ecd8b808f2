"""Reminders and timers: set, listed, cancelled (``skill``, ``timers``), asked for in
everyday words (``everyday``) and said back with their absolute time (``said``). The
scheduler that fires them is ``fayd.reminders``."""
