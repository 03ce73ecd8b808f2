"""The whole turn, from an utterance (speech already cut by a device's VAD, or text) to the
frames that answer it. :class:`Dialogue` is the entry point; it talks to devices only
through its ports (``fayd.agent.ports``, and the Sender).

A turn, in order (``Conversation.answer`` is where to start reading):

1. heard: speech to text (``listening``), or text as typed;
2. understood: an answer to fayd's own open question, else the router
   (``understand/router.py``: emergency → stop → qa.csv → templates → the gate of what the
   model cannot know → cue phrases → feeling unwell → small talk → nearest example →
   chit-chat), its slots read (``understand/slots.py``);
3. acted on: the intent's skill (``understanding.py`` → a feature's ``skill``), or for
   chit-chat the model (``chat.py``), each piece of its reply checked (``guard.py``,
   ``unfounded.py``);
4. delivered: text, speech and lips to the device (``output.py``), Sentiment and Action
   from the words (``expression.py``).

Features live one folder each (``features.py`` lists them); ``language/`` holds the words
they all read, the intents' declarations among them."""

from fayd.agent.chat import Chat, prompt_prefix
from fayd.agent.dialogue import Dialogue
from fayd.agent.ports import AgentEngines, Devices
from fayd.agent.turn import Turn

__all__ = ["AgentEngines", "Chat", "Devices", "Dialogue", "Turn", "prompt_prefix"]
