#!/usr/bin/env bash
# install.sh: set fayd up, either in this checkout (developer mode, the default) or as a
# systemd service (--system). Safe to run again: every step checks before it changes anything.
# Run ./install.sh --help for the details.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LLAMA_VERSION="0.3.36"
# A portable llama.cpp build (no -march=native), so pip's wheel cache can reuse the wheel on
# other installs and CI runners. Override CMAKE_ARGS to add e.g. -DGGML_BLAS=ON.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
# python3-venv: ensurepip for venvs; build-essential: compiles llama.cpp; python3-dev,
# libsystemd-dev and pkg-config: build systemd-python; the rest are runtime tools.
APT_PACKAGES=(mosquitto socat espeak-ng sox strace libsystemd-dev pkg-config systemd shellcheck
    python3-venv python3-dev build-essential)
# Developer mode only: the household page's browser tests drive Debian's chromium with
# Playwright (never a browser download); the box itself needs no browser.
DEV_APT_PACKAGES=(chromium)
FAYD_ROOT="${FAYD_ROOT:-}"
FAYD_INSTALL_SKIP_PYTHON="${FAYD_INSTALL_SKIP_PYTHON:-}"
LANG_ZH="" # --lang zh: the household speaks Chinese

usage() {
    cat <<EOF
Usage: ./install.sh [--system] [--lang zh] [--help]

Developer mode (default), run from the checkout:
  Debian packages: ${APT_PACKAGES[*]:0:7}
                   ${APT_PACKAGES[*]:7} ${DEV_APT_PACKAGES[*]};
  a virtual environment in .venv with llama-cpp-python ${LLAMA_VERSION}, fayd (editable, with the
  dev extra, and the systemd extra when it builds), then the default models and the Chinese
  ones (the tests need them; the daemon's settings are left alone).
  Without root it only lists the Debian packages that are missing.

--lang zh, a household that speaks Chinese (and English): installs the Chinese voice
  (fayd models install tts_zh) and the multilingual Whisper base (fayd models install asr
  --choice whisper-base), then hears each utterance in whichever of the two it is:
  --system sets speech.asr_language = "auto" in /etc/fayd/fayd.toml unless it is set there
  already; developer mode prints how to set it.

--system (root), installs the service:
  user and group 'fayd' (groups dialout, audio), /opt/fayd/venv, the models,
  /etc/fayd/fayd.toml (from fayd/fayd.example.toml, never overwritten), /var/lib/fayd,
  /etc/systemd/system/fayd.service, /etc/udev/rules.d/99-fayd.rules and
  /etc/modules-load.d/fayd.conf; then enables and (re)starts fayd when systemd is running.

Environment:
  PYTHON=/path/to/python3    interpreter for the venv (3.11 or newer; default: python3)
  CMAKE_ARGS=...             llama.cpp build options (default: -DGGML_NATIVE=OFF)
  FAYD_ROOT=/some/dir        --system: install below this prefix; no user, no chown, no apt,
                             no systemctl (for packaging and tests)
  FAYD_INSTALL_SKIP_PYTHON=1 --system: skip the venv, pip and models steps (for tests)
EOF
}

step() { printf '\n==> %s\n' "$*"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '    WARNING: %s\n' "$*" >&2; }
die() {
    printf '\nERROR: %s\n' "$*" >&2
    exit 1
}
is_root() { [ "$(id -u)" -eq 0 ]; }

# --- Debian packages ------------------------------------------------------------------------

ensure_debian_packages() {
    step "Debian packages"
    if [ -n "$FAYD_ROOT" ]; then
        info "FAYD_ROOT is set: leaving the system's packages alone"
        return
    fi
    if ! command -v dpkg-query >/dev/null; then
        warn "no dpkg-query (not Debian?): make sure these are installed: ${APT_PACKAGES[*]}"
        return
    fi
    local missing=() pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        # shellcheck disable=SC2016  # ${Status} is dpkg-query's field, not a shell variable
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        info "all installed"
    elif ! is_root || ! command -v apt-get >/dev/null; then
        warn "missing: ${missing[*]}"
        info "install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
        info "continuing without them"
    else
        info "installing: ${missing[*]}"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
    fi
    mosquitto_note
}

# Installing Debian's mosquitto starts mosquitto.service on port 1883 on a systemd machine.
# fayd's own private mosquitto therefore defaults to 1884 ([mqtt] embedded_port). The user's
# broker is theirs: point it out, don't touch it.
mosquitto_note() {
    if command -v ss >/dev/null && ss -Hltn 'sport = :1883' 2>/dev/null | grep -q .; then
        info "note: a broker already listens on port 1883 (likely Debian's mosquitto.service)."
        info "      fayd runs its own on 1884; to use that one instead, set in fayd.toml:"
        info "      [mqtt] url = \"mqtt://127.0.0.1:1883\". install.sh leaves it alone."
    fi
}

# --- Python and the virtual environment -----------------------------------------------------

python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

find_python() {
    step "Python 3.11 or newer"
    local candidate
    if [ -n "${PYTHON:-}" ]; then
        python_ok "$PYTHON" || die "PYTHON=$PYTHON is not a Python 3.11 or newer"
        PY="$PYTHON"
    else
        PY=""
        for candidate in python3 python3.13 python3.12 python3.11; do
            if command -v "$candidate" >/dev/null && python_ok "$candidate"; then
                PY="$(command -v "$candidate")"
                break
            fi
        done
        [ -n "$PY" ] || die "no Python 3.11 or newer found; install python3 or set PYTHON=..."
    fi
    "$PY" -c 'import ensurepip, venv' 2>/dev/null ||
        die "$PY cannot create virtual environments; on Debian: apt-get install python3-venv"
    info "using $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
}

make_venv() { # make_venv DIR
    step "Virtual environment $1"
    if [ -x "$1/bin/python" ]; then
        info "exists"
    else
        "$PY" -m venv "$1"
        info "created"
    fi
    "$1/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip wheel ||
        warn "could not upgrade pip and wheel (offline?); continuing"
}

# pip -v passes on the build's "[ 42/193] Building ..." (ninja) or "[ 21%] ..." (make) lines;
# show them on one updating line on a terminal, or every 10th line in a log, and pip's verdict.
build_progress() {
    local tty=0
    [ -t 1 ] && tty=1
    awk -v tty="$tty" '
        match($0, /\[ *[0-9]+(\/[0-9]+|%)\]/) {
            n++
            at = "    building llama.cpp " substr($0, RSTART, RLENGTH)
            if (tty) { printf "\r%s", at } else if (n % 10 == 1) { print at }
            fflush(); next
        }
        /^(Successfully installed|ERROR)/ {
            if (tty && n) { printf "\n"; n = 0 }
            print "    " $0; fflush()
        }
        END { if (tty && n) printf "\n" }'
}

install_llama() { # install_llama VENV
    step "llama-cpp-python $LLAMA_VERSION"
    local py="$1/bin/python" log
    if "$py" -c "import sys, llama_cpp; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" \
        2>/dev/null; then
        info "already installed"
        return
    fi
    info "CMAKE_ARGS=$CMAKE_ARGS; the first build takes minutes (a Pi: 15 or more),"
    info "later installs reuse the wheel from pip's cache"
    log="$(mktemp -t fayd-llama-build.XXXXXX)"
    if ! "$py" -m pip install -v --disable-pip-version-check "llama-cpp-python==$LLAMA_VERSION" \
        2>&1 | tee "$log" | build_progress; then
        tail -n 30 "$log" >&2
        die "llama-cpp-python did not build; full log: $log"
    fi
    rm -f "$log"
}

# --- developer mode -------------------------------------------------------------------------

developer_install() {
    local venv="$REPO/.venv"
    APT_PACKAGES+=("${DEV_APT_PACKAGES[@]}")
    ensure_debian_packages
    find_python
    make_venv "$venv"
    install_llama "$venv"

    step "fayd (editable, with the dev extra)"
    "$venv/bin/python" -m pip install --disable-pip-version-check -e "${REPO}[dev]"

    step "systemd-python (optional: journald logging and sd_notify through libsystemd)"
    if "$venv/bin/python" -c 'import systemd.daemon, systemd.journal' 2>/dev/null; then
        info "already installed"
    elif "$venv/bin/python" -m pip install --disable-pip-version-check -e "${REPO}[systemd]"; then
        info "installed"
    else
        warn "systemd-python did not build (needs libsystemd-dev, pkg-config, python3-dev);"
        warn "fayd works without it: plain sd_notify socket and stderr logs"
    fi

    install_models "$venv"
    install_chinese_models "$venv"
    if [ -n "$LANG_ZH" ]; then
        info "to hear Chinese, run fayd with FAYD_SPEECH_ASR_LANGUAGE=auto (or zh), or set in"
        info "your config file:  [speech] asr_language = \"auto\""
    fi
    install_test_clients

    step "Firmware host tools (MicroPython unix port, umqtt.simple) for the firmware tests"
    sh "$REPO/firmware/tools/host_setup.sh" "$venv" ||
        warn "firmware host tools did not install: the firmware host tests will be skipped"

    step "Done. Next:"
    info ".venv/bin/fayd run              # start the daemon in this terminal"
    info ".venv/bin/python -m pytest      # run the tests"
}

# An MCP client that is not fayd's own SDK, so the tests check fayd's MCP server against an
# independent implementation. Developer mode only; it lives in tests/.npm (git-ignored).
INSPECTOR="@modelcontextprotocol/inspector@2.12.0"
install_test_clients() {
    step "MCP Inspector (an independent MCP client for the tests)"
    local prefix="$REPO/tests/.npm"
    if [ -x "$prefix/node_modules/.bin/mcp-inspector" ] &&
        grep -q '"version": "2.12.0"' "$prefix/node_modules/@modelcontextprotocol/inspector/package.json" 2>/dev/null; then
        info "already installed"
    elif ! command -v npm >/dev/null; then
        warn "npm not found: the MCP Inspector test will be skipped (apt-get install npm)"
    else
        mkdir -p "$prefix"
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$INSPECTOR" ||
            warn "npm could not install $INSPECTOR: the MCP Inspector test will be skipped"
    fi
}

install_models() { # install_models VENV
    step "Models"
    "$1/bin/fayd" models install || die "installing the models failed (see above)"
    "$1/bin/fayd" models check || die "the models are not usable (see above)"
}

# The Chinese voice (the optional role tts_zh, when this fayd has it) and the multilingual
# Whisper base, put together in the state folder of the fayd that runs them.
install_chinese_models() { # install_chinese_models VENV [CONFIG STATE]
    local fayd=("$1/bin/fayd") env=() listed
    [ "$#" -lt 3 ] || env=(env "FAYD_CONFIG=$2" "STATE_DIRECTORY=$3")
    step "Chinese models (voice and the multilingual speech recognition)"
    # Listed first, then searched: grep -q stopping early would fail the pipe (pipefail).
    listed="$("${env[@]}" "${fayd[@]}" models list)" || die "fayd models list failed"
    if grep -q '^tts_zh:' <<<"$listed"; then
        "${env[@]}" "${fayd[@]}" models install tts_zh || die "installing the Chinese voice failed"
    else
        info "this fayd has no Chinese voice (no tts_zh model role): skipped"
    fi
    "${env[@]}" "${fayd[@]}" models install asr --choice whisper-base >/dev/null ||
        die "installing the multilingual Whisper base failed (see above)"
    info "Whisper base is in the state folder's models/whisper-base"
}

# set_asr_language FILE: speech.asr_language = "auto" in FILE, unless FILE sets it already
# (the household's own choice is never overwritten).
set_asr_language() {
    local file="$1" line='asr_language = "auto" # install.sh --lang zh: en or zh per utterance'
    if grep -Eq '^[[:space:]]*asr_language[[:space:]]*=' "$file"; then
        info "kept: $file sets it already ($(grep -Em1 '^[[:space:]]*asr_language' "$file"))"
    elif grep -Eq '^[[:space:]]*\[speech\][[:space:]]*(#.*)?$' "$file"; then
        # cat > keeps the file's owner and mode (sed -i would make a new file).
        awk -v line="$line" '{ print } !done && /^[[:space:]]*\[speech\]/ { print line; done = 1 }' \
            "$file" >"$file.new" && cat "$file.new" >"$file" && rm -f "$file.new"
        info "set in $file: [speech] $line"
    else
        printf '\n[speech]\n%s\n' "$line" >>"$file"
        info "added to $file: [speech] $line"
    fi
}

# --- system mode ----------------------------------------------------------------------------

system_install() {
    local opt="$FAYD_ROOT/opt/fayd" etc="$FAYD_ROOT/etc/fayd" state="$FAYD_ROOT/var/lib/fayd"
    local venv="$FAYD_ROOT/opt/fayd/venv" file
    if [ -z "$FAYD_ROOT" ] && ! is_root; then
        die "--system needs root: sudo ./install.sh --system"
    fi
    for file in pyproject.toml systemd/fayd.service udev/99-fayd.rules fayd/fayd.example.toml; do
        [ -f "$REPO/$file" ] || die "$REPO/$file is missing: run install.sh from a fayd checkout"
    done
    umask 022 # the venv and unit must be readable by the fayd user and systemd

    ensure_debian_packages

    step "Service user fayd"
    if [ -n "$FAYD_ROOT" ]; then
        info "FAYD_ROOT is set: not creating users"
    elif id -u fayd >/dev/null 2>&1; then
        usermod --append --groups dialout,audio fayd
        info "exists (groups: $(id -nG fayd))"
    else
        useradd --system --user-group --home-dir /var/lib/fayd --no-create-home \
            --shell /usr/sbin/nologin --groups dialout,audio fayd
        info "created"
    fi

    if [ -n "$FAYD_INSTALL_SKIP_PYTHON" ]; then
        step "Python environment"
        info "FAYD_INSTALL_SKIP_PYTHON is set: skipping the venv, fayd and the models"
    else
        find_python
        mkdir -p "$opt"
        make_venv "$venv"
        install_llama "$venv"
        step "fayd into $venv"
        if ! "$venv/bin/python" -m pip install --disable-pip-version-check --upgrade \
            "${REPO}[systemd]"; then
            warn "with the systemd extra it did not build (libsystemd-dev, pkg-config,"
            warn "python3-dev?); installing without it: plain sd_notify, stderr logs"
            "$venv/bin/python" -m pip install --disable-pip-version-check --upgrade "$REPO"
        fi
        install_models "$venv"
    fi

    # Ownership only for a real install: a FAYD_ROOT staging tree has no fayd user.
    local as_config=() as_state=()
    if [ -z "$FAYD_ROOT" ]; then
        as_config=(-o root -g fayd)
        as_state=(-o fayd -g fayd)
    fi

    step "Configuration $etc/fayd.toml"
    install -d -m 0750 "${as_config[@]}" "$etc"
    if [ -e "$etc/fayd.toml" ]; then
        info "exists: kept as it is (the example is $REPO/fayd/fayd.example.toml)"
    else
        install -m 0640 "${as_config[@]}" "$REPO/fayd/fayd.example.toml" "$etc/fayd.toml"
        info "written from fayd/fayd.example.toml"
    fi

    step "State $state"
    install -d -m 0750 "${as_state[@]}" "$state"
    info "ok"

    if [ -n "$LANG_ZH" ]; then
        if [ -n "$FAYD_INSTALL_SKIP_PYTHON" ]; then
            step "Chinese models"
            info "FAYD_INSTALL_SKIP_PYTHON is set: skipping them"
        else
            install_chinese_models "$venv" "$etc/fayd.toml" "$state"
            [ -n "$FAYD_ROOT" ] || chown -R fayd:fayd "$state/models"
        fi
        step "Hearing Chinese: speech.asr_language in $etc/fayd.toml"
        set_asr_language "$etc/fayd.toml"
    fi

    step "systemd unit, udev rules, kernel modules"
    install -D -m 0644 "$REPO/systemd/fayd.service" "$FAYD_ROOT/etc/systemd/system/fayd.service"
    info "$FAYD_ROOT/etc/systemd/system/fayd.service"
    install -D -m 0644 "$REPO/udev/99-fayd.rules" "$FAYD_ROOT/etc/udev/rules.d/99-fayd.rules"
    info "$FAYD_ROOT/etc/udev/rules.d/99-fayd.rules"
    # DeviceAllow=char-ttyUSB/char-ttyACM resolve through /proc/devices when fayd starts; load
    # the USB serial drivers at boot so a board plugged in later is allowed too.
    install -d -m 0755 "$FAYD_ROOT/etc/modules-load.d"
    printf '# fayd: USB serial drivers, see DeviceAllow= in fayd.service\nusbserial\ncdc_acm\n' \
        >"$FAYD_ROOT/etc/modules-load.d/fayd.conf"
    info "$FAYD_ROOT/etc/modules-load.d/fayd.conf"

    step "Start on boot"
    if [ -z "$FAYD_ROOT" ] && [ -d /run/systemd/system ]; then
        modprobe -a usbserial cdc_acm 2>/dev/null || warn "could not load usbserial/cdc_acm now"
        udevadm control --reload-rules && udevadm trigger --subsystem-match=tty
        systemctl daemon-reload
        systemctl enable fayd
        # restart, not just --now: a re-run after an update must pick up the new code.
        info "starting fayd (waits until it reports ready; loading models takes a while)"
        if systemctl restart fayd; then
            info "fayd is $(systemctl is-active fayd)"
        else
            warn "fayd did not start; see: journalctl -u fayd -b --no-pager | tail -n 50"
            exit 1
        fi
        info "logs: journalctl -u fayd -f      status: systemctl status fayd"
    else
        info "systemd is not running here (or FAYD_ROOT is set): the unit was not enabled."
        info "On the device, run:"
        info "  sudo systemctl daemon-reload && sudo systemctl enable --now fayd"
        info "  sudo udevadm control --reload-rules && sudo udevadm trigger"
    fi
}

# --- main -----------------------------------------------------------------------------------

main() {
    local mode=developer
    while [ "$#" -gt 0 ]; do
        case "$1" in
        --system) mode=system ;;
        --lang)
            [ "${2:-}" = zh ] || die "--lang takes zh (the one language besides English): --lang zh"
            LANG_ZH=1
            shift
            ;;
        --lang=zh) LANG_ZH=1 ;;
        -h | --help)
            usage
            return 0
            ;;
        *)
            usage >&2
            die "unknown option: $1"
            ;;
        esac
        shift
    done
    printf 'fayd install (%s mode%s) from %s\n' "$mode" "${LANG_ZH:+, Chinese}" "$REPO"
    if [ "$mode" = system ]; then
        system_install
    else
        developer_install
    fi
}

main "$@"
