"""What every part of the agent reads sentences with: text as the router compares it
(``text``), the word lists and template rules written once (``phrases``, ``lists.toml``),
the intents' declarations (``declared``, ``intents.toml``) and the nearest-example matcher
(``intents``). It imports nothing else of the agent."""
