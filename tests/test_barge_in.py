"""Interruption: the user talks over fayd → a stop command, the reply ends, and what the
user said is answered; another device's reply keeps flowing meanwhile."""

from __future__ import annotations

import time

from .conftest import frames_until, is_text_end
from .test_daemon_e2e import stored_messages, words


async def test_barge_in_stops_the_reply_and_answers_the_interruption(daemon, speak) -> None:
    interruption = speak("Stop. What time is it?", pad_s=0.3)
    async with daemon.sim("talker") as a, daemon.sim("bystander") as b:
        await a.hello()
        await b.hello()
        await a.say_text("Tell me a long story about a brave dragon and a small village.")
        await b.say_text("Tell me a long story about a ship at sea.")
        # A hears the start of its reply, then talks over it.
        got = await frames_until(a, lambda got: any(k == "audio" and f.pcm for k, f, _ in got))
        talking_from = time.monotonic()
        await a.speak(interruption, realtime=True)
        await frames_until(a, lambda got: sum(map(is_text_end, got)) >= 2, got=got)
        stops = [f for k, f, at in got if k == "command" and f.name == "stop"]
        assert stops and stops[0].args == {"reason": "barge-in"}
        stop_at = next(at for k, f, at in got if k == "command")
        assert stop_at >= talking_from
        # B's reply went on to its end, with audio, while A interrupted.
        b_frames = await frames_until(b, lambda got: any(k == "audio" and f.end for k, f, _ in got))
        assert sum(len(f.pcm) for k, f, _ in b_frames if k == "audio") > 0
        assert any(map(is_text_end, b_frames))
        assert not any(k == "command" for k, _, _ in b_frames)

    questions = [text for role, text, _ in stored_messages(daemon, "talker", 4) if role == "user"]
    assert "time" in words(questions[-1])
