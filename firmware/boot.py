# ESP32 boot: pick the app version (OTA, below), then join Wi-Fi for the MQTT transport
# (main.py runs next). On the host, firmware/tools/host_boot.py runs boot.py and main.py.
import json
import os
import sys
import time

try:
    import network
except ImportError:  # the unix port
    network = None

# --- OTA: which app folder runs -----------------------------------------------------------
# ota.json (written by fayd_fw/ota.py when an update is committed) names the app folder:
# {"active": "app_b", "previous": "app_a", "state": "trial", "boots": 0, "version": "0.2.0"}
# "" is the app as flashed (version.py and fayd_fw/ next to this file). A "trial" version
# gets one boot: still unconfirmed at the next boot (it crashed, hung, or never heard from
# fayd) means boot.py goes back to the previous version. This file, main.py and config.json
# are never replaced over the air, so the way back always works.


def _ota_save(st):
    with open("ota.tmp", "w") as f:
        json.dump(st, f)
    try:
        os.rename("ota.tmp", "ota.json")  # atomic on littlefs and POSIX
    except OSError:  # FAT does not rename over a file; losing both means the flashed app
        os.remove("ota.json")
        os.rename("ota.tmp", "ota.json")


def _ota_slot():
    try:
        with open("ota.json") as f:
            st = json.load(f)
    except (OSError, ValueError):
        return ""
    if st.get("state") == "trial":
        if st.get("boots", 0) >= 1:
            print("ota: %s was not confirmed; back to the previous version" % st.get("version"))
            st = {
                "active": st.get("previous") or "",
                "previous": "",
                "state": "ok",
                "failed": st.get("version", "?"),
            }
        else:
            st["boots"] = 1
        _ota_save(st)
    slot = st.get("active") or ""
    if slot:
        try:
            os.stat(slot + "/version.py")
        except OSError:
            print("ota: %s is incomplete; running the flashed app" % slot)
            return ""
    return slot


try:
    _slot = _ota_slot()
except Exception as _exc:  # never keep the device from booting
    print("ota: %r" % _exc)
    _slot = ""
if _slot:
    sys.path.insert(0, os.getcwd().rstrip("/") + "/" + _slot)

# --- Wi-Fi ----------------------------------------------------------------------------------
if network is not None:
    try:
        with open("config.json") as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        cfg = {}
    wifi = cfg.get("wifi") or {}
    if cfg.get("transport", "mqtt") == "mqtt" and wifi.get("ssid"):
        sta = network.WLAN(network.STA_IF)
        sta.active(True)
        if not sta.isconnected():
            sta.connect(wifi["ssid"], wifi.get("password", ""))
            t0 = time.ticks_ms()
            while not sta.isconnected() and time.ticks_diff(time.ticks_ms(), t0) < 15000:
                time.sleep_ms(100)
        # Not connected yet is fine: the MQTT link retries with back-off.
