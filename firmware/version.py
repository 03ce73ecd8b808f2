# Firmware version: sent in every hello as "fw".
FW_VERSION = "0.1.0"
