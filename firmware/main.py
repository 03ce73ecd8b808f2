# Starts the device from config.json (on the host, $FAYD_FW_CONFIG names another file).
# boot.py put the app folder of the running version first on sys.path (OTA); a trial
# version that fails here resets the ESP32, so that boot.py goes back to the previous one.
import os
import sys

base = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
path = (os.getenv("FAYD_FW_CONFIG") if hasattr(os, "getenv") else None) or base + "/config.json"


def _trial():
    try:
        import json

        with open(base + "/ota.json") as f:
            return json.load(f).get("state") == "trial"
    except Exception:
        return False


try:
    import fayd_fw
    from fayd_fw.app import Device, load_config

    parts = fayd_fw.__file__.rsplit("/", 2)  # <app folder>/fayd_fw/__init__.py
    # The device's files (ota.json, app_a/, app_b/, events.*) live in its filesystem root:
    # here on the ESP32; on the host a state folder outside the checkout (hw.state_dir).
    root = base if sys.platform == "esp32" else None
    Device(load_config(path), parts[0] if len(parts) == 3 else ".", root).run()
except Exception as exc:
    sys.print_exception(exc)
    if sys.platform == "esp32":
        import time

        import machine

        # A trial version: boot.py finds it unconfirmed and goes back. Any other crash: a
        # board left at the REPL serves nobody until it is unplugged, so it starts again
        # (its unacked events are on flash); the pause keeps a crash loop from racing.
        time.sleep(1 if _trial() else 5)
        machine.reset()
    raise
