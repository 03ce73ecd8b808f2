# Starts the device from config.json (on the host, $FAYD_FW_CONFIG names another file).
import os

from fayd_fw.app import Device, load_config

base = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
path = (os.getenv("FAYD_FW_CONFIG") if hasattr(os, "getenv") else None) or base + "/config.json"
Device(load_config(path), base).run()
