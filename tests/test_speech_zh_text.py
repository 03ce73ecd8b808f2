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
