"""Time expressions in what people say, English and Chinese (``times``, ``times_zh``),
shared by reminders, timers, care rules and the clock skill, and the question asked when
one is ambiguous (``pending``)."""
