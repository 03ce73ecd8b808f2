"""Care in conversation: emergencies found before anything else (``emergency``), what is
said after one (``after_emergency``), feeling unwell (``symptoms``, ``passed``,
``wellbeing``), the day's digest and being left in peace (``skill``), and care rules said
in words by a caregiver (``rule_words`` reads them, ``rules`` keeps them). The care engine
that watches events and alerts caregivers is ``fayd.care``."""
