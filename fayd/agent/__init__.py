"""The conversation: prompt assembly, the model's reply, the stored exchange."""

from fayd.agent.chat import Agent, Turn

__all__ = ["Agent", "Turn"]
