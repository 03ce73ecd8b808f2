"""Doors beside the control API, on its port and behind its lock (fayd.auth.HttpGuard)."""
