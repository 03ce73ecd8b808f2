"""The whole turn, from an utterance (speech already cut by a device's VAD, or text) to the
frames that answer it: transcription, the model's reply with memory, expression (Action and
Sentiment), speech and lip track. :class:`Dialogue` is the entry point; it talks to devices
only through its ports (``fayd.agent.ports``, and the Sender)."""

from fayd.agent.chat import Chat, prompt_prefix
from fayd.agent.dialogue import Dialogue
from fayd.agent.ports import AgentEngines, Devices
from fayd.agent.turn import Turn

__all__ = ["AgentEngines", "Chat", "Devices", "Dialogue", "Turn", "prompt_prefix"]
