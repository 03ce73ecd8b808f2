# ESP32 boot: join Wi-Fi for the MQTT transport (main.py runs next). Not used on the host.
import json
import time

try:
    import network
except ImportError:  # the unix port
    network = None

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
