"""The clock: time expressions in English and Chinese (``times``, ``times_zh``) that
reminders, timers and care rules share, and the time, the date and days-until (``skill``)."""
