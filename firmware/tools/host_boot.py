# Host only: one power-on of an ESP32 on MicroPython's unix port: boot.py, then main.py, in
# one interpreter, as the ESP32 runs them. A reset (hw.reset) ends the process with status
# 3; running this again with the same state folder is the next boot.
#
#   micropython firmware/tools/host_boot.py [--state DIR]
#
# The firmware (boot.py, main.py, fayd_fw/) is the current folder when it holds boot.py (a
# folder laid out like the ESP32's flash), else the folder above tools/ (the checkout). The
# device's writable flash (ota.json, app_a/ and app_b/ of updates, events.*, and the host's
# hw.jsonl and inbox.jsonl) is DIR; without --state, the current folder when it is the
# firmware's, else hw.state_dir (config's host.dir, $FAYD_FW_STATE, or
# $XDG_STATE_HOME/fayd-fw/<device>): a run from the checkout writes nothing into it.
import json
import os
import sys

args = sys.argv[1:]
state = args[args.index("--state") + 1] if "--state" in args[:-1] else None
try:
    os.stat("boot.py")
    firmware = os.getcwd()
except OSError:
    here = sys.argv[0].rsplit("/", 1)[0] if "/" in sys.argv[0] else "."
    firmware = (here + "/..") if not here.startswith("/") else here.rsplit("/", 1)[0]
    if not firmware.startswith("/"):
        firmware = os.getcwd() + "/" + firmware
for lib in (firmware, firmware + "/.host/lib"):  # after the OTA folder boot.py puts first
    if lib not in sys.path:
        sys.path.append(lib)
if state is None and firmware != os.getcwd():
    from fayd_fw import hw

    config = os.getenv("FAYD_FW_CONFIG") or firmware + "/config.json"
    with open(config) as f:
        state = hw.state_dir(json.load(f))
if state is not None:
    os.putenv("FAYD_FW_STATE", state)  # hw.state_dir: main.py's Device writes there too
    os.chdir(state)  # boot.py reads ota.json and finds the OTA folders here
for name in ("boot.py", "main.py"):
    with open(firmware + "/" + name) as f:
        source = f.read()
    exec(source, {"__name__": "__main__", "__file__": firmware + "/" + name})
