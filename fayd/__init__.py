"""fayd: an offline companion daemon for a single-board computer."""

import os

__version__ = "0.1.0"

# onnxruntime 1.29+ sends usage telemetry to Microsoft from Linux too (a 1DS uploader thread
# that looks up mobile.events.data.microsoft.com while fayd sits idle: seen with strace).
# fayd makes no calls outside the user's own network, ever: this variable, set before
# onnxruntime starts, turns the uploader, its events, device id and cache off. Set here,
# not in the service file alone, so every way of running fayd (CLI, MCP, tests) has it.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
