"""Words and secrets in the log (docs/security.md, "Logs").

What people say is private, and a journal is read by more people, and kept longer, than
fayd's database: a log line names a turn by its id, intent, lengths and timings. Text that
people said or that was said to them (utterances, replies, memories, reminders, alert texts
that quote someone, model prompts and output) goes into a record only wrapped in
:func:`words`, which prints as ``<23 chars>``; :class:`PrivacyFilter` shows the text itself
only in DEBUG records and only when ``[log] words = true``.

Secrets (passwords in URLs, bearer tokens) are never logged on purpose; :func:`hide_secrets`
masks any that reach a line anyway (a library's exception quoting a URL), at every level.
"""

from __future__ import annotations

import logging
import re


class Words:
    """Text from or for a person, in a log record's arguments: ``<N chars>`` when printed,
    unless :class:`PrivacyFilter` shows it."""

    __slots__ = ("text",)

    def __init__(self, text: object) -> None:
        self.text = "" if text is None else str(text)

    def __str__(self) -> str:
        return f"<{len(self.text)} chars>"

    __repr__ = __str__


def words(text: object) -> Words:
    """``text`` (a string, or an exception whose message may quote one) for a log record,
    formatted with ``%s`` (the filter puts the text's repr in its place)."""
    return Words(text)


#: Libraries whose DEBUG lines carry people's words (Apprise logs each notification's
#: payload, an alert's text; Piper each sentence it speaks): dropped unless words are shown.
WORDY_LIBRARIES = frozenset({"apprise", "piper"})


class PrivacyFilter(logging.Filter):
    """On a handler: a DEBUG record shows its :class:`Words` as text when ``show_words``
    (``[log] words``); every other record keeps the placeholders. Then the whole line, and
    its traceback, go through :func:`hide_secrets`, flattened into the record so that no
    handler (the journal's keeps a record's arguments in a field of their own) sees more."""

    def __init__(self, show_words: bool = False) -> None:
        super().__init__()
        self.show_words = show_words

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG and not self.show_words:
            if record.name.partition(".")[0] in WORDY_LIBRARIES:
                return False
        args = record.args
        if self.show_words and record.levelno <= logging.DEBUG and isinstance(args, tuple):
            record.args = tuple(repr(a.text) if isinstance(a, Words) else a for a in args)
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: the handler reports it as logging does
            return True
        record.msg, record.args = hide_secrets(message), None
        if record.exc_info:
            text = record.exc_text or logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = hide_secrets(text), None
        return True


#: ``scheme://user:password@`` (Apprise, MQTT and HTTP URLs): the password.
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)[^\s/@]+@")
#: ``?token=…``, ``&password=…`` and the like in a URL's query.
_QUERY_SECRET = re.compile(
    r"([?&](?:token|access_token|password|pass|pw|secret|key|apikey|api_key|auth)=)[^&#\s]+",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)


def hide_secrets(text: str) -> str:
    """``text`` with the passwords of URLs, secret query values and bearer tokens masked."""
    if "://" in text:
        text = _URL_PASSWORD.sub(r"\1***@", text)
    if "=" in text:
        text = _QUERY_SECRET.sub(r"\1***", text)
    return _BEARER.sub(r"\1***", text)
