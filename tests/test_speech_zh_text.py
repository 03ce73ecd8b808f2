"""Chinese text written out for the Baker voice's frontend: what it would misread."""

from __future__ import annotations

import pytest

from fayd.speech.zh_text import clauses


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("上午8:30", ["上午八点三十分"]),
        ("下午3:05", ["下午三点零五分"]),
        ("吃2片", ["吃两片"]),
        ("1/2杯水", ["1/2杯水"]),  # a fraction stays one for cn_tn (二分之一)
        # A blood pressure is two readings, never "九十分之一百四十".
        ("您的血压是140/90。", ["您的血压是140", "90"]),
        ("2024/3/5", ["2024年3月5日"]),
        ("3/5号", ["3月5号"]),
        ("Hello 你好", ["你好"]),
    ],
)
def test_what_the_frontend_would_misread_is_written_out(text: str, said: list[str]) -> None:
    assert [clause for clause, _ in clauses(text)] == said


@pytest.mark.parametrize(
    ("heard", "meant"),
    [
        ("现在是上58.30分", "现在是上午8:30分"),  # Whisper base's 午 as 5 before a time
        ("下53点提醒我", "下午3点提醒我"),
        ("中512点吃饭", "中午12点吃饭"),
        ("上5个月", "上5个月"),  # not a time: left alone
        ("上5楼", "上5楼"),
    ],
)
def test_whispers_noon_heard_as_five_is_put_right(heard: str, meant: str) -> None:
    from fayd.speech.zh_script import tidy_times

    assert tidy_times(heard) == meant
