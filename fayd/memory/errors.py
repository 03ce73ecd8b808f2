"""Bad input to memory (empty content, malformed nodes.json…): a FaydError, so the CLI
prints it as one clear line, and a ValueError, so callers can treat it as bad input."""

from __future__ import annotations

from fayd.errors import FaydError


class BadInput(FaydError, ValueError):
    """Input rejected before anything was written."""
