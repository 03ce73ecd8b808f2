"""The tools the model may look up (fayd.agent.tools), wired: the loop's model (the local one,
or Fay's dual-model LAN server, ``llm.tools_url``), the household's tool sources, the
read-only skills in each turn's context, and the configured prestart calls."""

from __future__ import annotations

import logging

from fayd.agent.chat import Chat
from fayd.agent.tools import READ_ONLY_SKILLS, Prestart, Toolbox, ToolLoop, ToolSource, TurnTools
from fayd.agent.tools.skills import skill_tools
from fayd.agent.understanding import Understanding
from fayd.config import Config
from fayd.llm import ChatLlm

log = logging.getLogger(__name__)


def loop_model(cfg: Config, local: ChatLlm | None) -> ChatLlm | None:
    """The model that chooses the tools: the LAN server of ``llm.tools_url``, else the one
    that answers."""
    if not cfg.llm.tools_url:
        return local
    from fayd.llm.remote import RemoteLlm

    llm = cfg.llm
    return RemoteLlm(
        llm.tools_url, model=llm.remote_model, api_key=llm.api_key, timeout_s=llm.timeout_s
    )


def give_tools(
    chat: Chat, cfg: Config, understood: Understanding | None, sources: list[ToolSource]
) -> None:
    """Set ``chat.tools`` (left None without a model: the reply says the model is missing)."""
    llm = loop_model(cfg, chat.llm)
    if llm is None:
        return
    tools = cfg.tools
    loop = ToolLoop(llm, Toolbox(sources=sources), tools.steps, tools.timeout_s, tools.result_chars)
    own = None
    if understood is not None:
        u = understood

        def own(user: str, device: str, lang: str) -> list:
            return skill_tools(u.skills, lambda: u.context(user, device, lang), READ_ONLY_SKILLS)

    prestart = [Prestart.parse(call) for call in tools.prestart]
    # The bundled 135M model cannot retell a passage: documents are quoted (docs/tools.md).
    bundled = not cfg.llm.model_path and not cfg.llm.url
    chat.tools = TurnTools(loop, prestart, tools.loop, own, quote=bundled)
