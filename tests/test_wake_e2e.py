"""A device with a wake word: speech without it is not answered; "Hey Jarvis, …" is, and
the question is stored without the wake phrase."""

from __future__ import annotations

from .test_daemon_e2e import stored_messages, words


async def test_only_speech_after_the_wake_word_is_answered(make_daemon, speak) -> None:
    daemon = make_daemon({"FAYD_SPEECH_WAKE_WORD": "hey_jarvis"})
    async with daemon.sim("hall-1") as device:
        await device.hello()
        await device.speak(speak("What is the weather like in the garden?"))
        await device.speak(speak("Hey Jarvis, what time is it?"))
        reply = await device.collect_reply()
    assert reply.text
    questions = [text for role, text, _ in stored_messages(daemon, "hall-1") if role == "user"]
    assert len(questions) == 1, questions
    assert "time" in words(questions[0]) and "jarvis" not in words(questions[0])
    assert "speech without the wake word, not answered" in daemon.log_text()
