# fayd firmware package (MicroPython for ESP32; also runs on MicroPython's unix port).


class FwError(Exception):
    """The one exception type of the firmware: ``code`` names what went wrong
    (a protocol error code such as "malformed", or "link" / "hw" for I/O)."""

    def __init__(self, message, code="malformed"):
        super().__init__(message)
        self.code = code
