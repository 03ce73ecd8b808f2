"""Transports move frames; they do not interpret them."""
