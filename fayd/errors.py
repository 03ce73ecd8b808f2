"""fayd's exception tree, drawn in one place.

    FaydError
    ├── ConfigError          a bad key or value in the config file or environment
    ├── ProtocolError        a frame that cannot be decoded or is too large
    ├── ModelError
    │   └── ModelMissing     a model file is not on disk (says how to install it)
    ├── StoreError           the SQLite store cannot be opened or written
    ├── LinkError            a transport (MQTT broker, serial port) is unreachable
    ├── BadInput             a memory write or query that is malformed (fayd.memory)
    └── OtaError             a firmware update failed or was refused (fayd.devices.ota)

Foreign errors (aiomqtt, sqlite3, OSError) are translated into these at the boundary
with ``raise … from exc`` so callers only ever catch fayd's own.
"""

from __future__ import annotations


class FaydError(Exception):
    """Base of every error fayd raises on purpose."""


class ConfigError(FaydError):
    """A config key or value is wrong; the message names the key and its source."""


class ProtocolError(FaydError):
    """A wire frame is malformed, of an unknown kind, or over the size limit."""

    def __init__(self, message: str, code: str = "malformed") -> None:
        super().__init__(message)
        self.code = code


class ModelError(FaydError):
    """A model could not be loaded."""


class ModelMissing(ModelError):
    """A model file is not where it should be."""

    def __init__(self, role: str, path: str, install_hint: str) -> None:
        super().__init__(f"{role} model missing: {path}\n  install it with: {install_hint}")
        self.role = role
        self.path = path
        self.install_hint = install_hint


class StoreError(FaydError):
    """The SQLite store failed."""


class LinkError(FaydError):
    """A transport link (broker, serial port) failed or is unreachable."""
