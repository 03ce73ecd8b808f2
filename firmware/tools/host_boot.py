# Host only: one power-on of an ESP32 whose filesystem is the current folder: boot.py, then
# main.py, in one interpreter, as the ESP32 runs them. A reset (hw.reset) ends the process
# with status 3; running this again on the same folder is the next boot.
import os

root = os.getcwd()
for name in ("boot.py", "main.py"):
    with open(root + "/" + name) as f:
        source = f.read()
    exec(source, {"__name__": "__main__", "__file__": root + "/" + name})
