"""fayd: an offline companion daemon for a single-board computer."""

__version__ = "0.1.0"
