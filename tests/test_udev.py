"""udev/99-fayd.rules: syntax, the adapters it covers, and what it does to a simulated device.

``udevadm verify`` does not exist in udev 252 (Debian 12) and there is no udevd here, so the
file is parsed by the small reader below (the subset of udev's rule syntax fayd uses, with
udev's key/operator table) and run by an equally small evaluator against device properties
such as 60-serial.rules would leave them.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[1] / "udev" / "99-fayd.rules"

# udev(7): keys that only match, keys that only assign, keys that can do both.
MATCH_ONLY = {
    "ACTION", "DEVPATH", "KERNEL", "KERNELS", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER", "DRIVERS",
    "ATTRS", "TAGS", "CONST", "TEST", "PROGRAM", "RESULT",
}  # fmt: skip
ASSIGN_ONLY = {"OWNER", "GROUP", "MODE", "SECLABEL", "OPTIONS", "IMPORT", "RUN", "LABEL", "GOTO"}
EITHER = {"ENV", "ATTR", "SYSCTL", "TAG", "SYMLINK", "NAME"}
NEEDS_ATTR = {"ATTR", "ATTRS", "ENV", "SYSCTL", "CONST", "IMPORT", "SECLABEL"}
PLAIN_ASSIGN_ONLY = {"LABEL", "GOTO", "IMPORT"}  # only "=" makes sense for these
MATCH_OPS = {"==", "!="}
ASSIGN_OPS = {"=", "+=", "-=", ":="}

TOKEN = re.compile(
    r'(?P<key>[A-Z_]+)(?:\{(?P<attr>[^{}"]+)\})?(?P<op>==|!=|\+=|-=|:=|=)"(?P<value>[^"]*)"'
)
SEPARATOR = re.compile(r"\s*,\s*")


@dataclass(frozen=True)
class Token:
    key: str
    attr: str | None
    op: str
    value: str

    @property
    def is_match(self) -> bool:
        return self.op in MATCH_OPS


def parse_line(line: str) -> list[Token]:
    """One rule line -> its tokens; raises ValueError on anything udev would not accept."""
    tokens, pos = [], 0
    while True:
        m = TOKEN.match(line, pos)
        if not m:
            raise ValueError(f"bad token at column {pos}: {line[pos:]!r}")
        tokens.append(Token(m["key"], m["attr"], m["op"], m["value"]))
        pos = m.end()
        if pos == len(line):
            return tokens
        sep = SEPARATOR.match(line, pos)
        if not sep or sep.end() == len(line):  # no comma, or a trailing comma
            raise ValueError(f"expected ', KEY' at column {pos}: {line[pos:]!r}")
        pos = sep.end()


def read_rules() -> list[tuple[int, list[Token]]]:
    rules = []
    for number, raw in enumerate(RULES.read_text().splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            assert not line.endswith("\\"), f"line {number}: keep rules on one line"
            rules.append((number, parse_line(line)))
    return rules


@pytest.mark.parametrize(
    "line",
    ['KERNEL=="ttyUSB*",', 'KERNEL=="ttyUSB*" GROUP="dialout"', "KERNEL==ttyUSB*", 'KERNEL=="a"b"'],
)
def test_the_reader_rejects_malformed_lines(line: str) -> None:
    with pytest.raises(ValueError):
        parse_line(line)


def test_every_line_is_valid_syntax_with_known_keys_and_operators() -> None:
    rules = read_rules()
    assert rules
    for number, tokens in rules:
        for t in tokens:
            where = f"line {number}: {t.key}"
            assert t.key in MATCH_ONLY | ASSIGN_ONLY | EITHER, f"{where} is not a udev key"
            if t.key in MATCH_ONLY:
                assert t.op in MATCH_OPS, f"{where} can only match (==, !=), not {t.op}"
            elif t.key in ASSIGN_ONLY:
                assert t.op in ASSIGN_OPS, f"{where} can only be assigned, not {t.op}"
            if t.key in PLAIN_ASSIGN_ONLY:
                assert t.op == "=", f"{where} takes '=', not {t.op}"
            if t.key in NEEDS_ATTR:
                assert t.attr, f"{where} needs {{name}}"
        labels_only = all(t.key == "LABEL" for t in tokens)
        assert labels_only or any(not t.is_match for t in tokens), f"line {number}: no action"


def test_goto_targets_exist_after_the_jump() -> None:
    rules = read_rules()
    labels = {t.value: n for n, tokens in rules for t in tokens if t.key == "LABEL"}
    for number, tokens in rules:
        for t in tokens:
            if t.key == "GOTO":
                assert t.value in labels, f"line {number}: GOTO {t.value} has no LABEL"
                assert labels[t.value] > number, f"line {number}: GOTO jumps backwards"


def test_private_properties_are_set_before_use() -> None:
    assigned: set[str] = set()
    for number, tokens in read_rules():
        for t in tokens:
            for name in re.findall(r"\$env\{([^}]+)\}", t.value):
                if name.startswith("."):
                    assert name in assigned or name == ".FAYD_IF", f"line {number}: {name} unset"
            if t.key == "ENV" and t.attr and t.attr.startswith(".") and not t.is_match:
                assigned.add(t.attr)


def _ids() -> set[tuple[str, str | None]]:
    found = set()
    for _, tokens in read_rules():
        attrs = {t.attr: t.value for t in tokens if t.key == "ATTRS" and t.op == "=="}
        if "idVendor" in attrs:
            found.add((attrs["idVendor"], attrs.get("idProduct")))
    return found


@pytest.mark.parametrize(
    ("vendor", "product"),
    [
        ("303a", None),  # Espressif native USB, every product id
        ("10c4", "ea60"),  # CP210x
        ("1a86", "7523"),  # CH340
        ("1a86", "55d4"),  # CH9102
        ("0403", "6001"),  # FT232R
        ("0403", "6015"),  # FT231X
    ],
)
def test_adapter_is_covered(vendor: str, product: str | None) -> None:
    assert (vendor, product) in _ids()


# --- a tiny evaluator for this file's subset of udev ----------------------------------------


def _glob(value: str, pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(value, alt) for alt in pattern.split("|"))


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$env\{([^}]+)\}", lambda m: env.get(m[1], ""), value)


@dataclass
class Result:
    env: dict[str, str]
    group: str | None = None
    mode: str | None = None
    symlinks: tuple[str, ...] = ()


def simulate(usb: dict[str, str], env: dict[str, str], action: str = "add") -> Result:
    """Run the rules for a tty whose USB parent has sysfs attributes ``usb``."""
    device = {"ACTION": action, "SUBSYSTEM": "tty", "SUBSYSTEMS": "usb"}
    result = Result(env=dict(env))
    links: list[str] = []
    rules = read_rules()
    skip_to = None
    for _, tokens in rules:
        if skip_to is not None:
            if any(t.key == "LABEL" and t.value == skip_to for t in tokens):
                skip_to = None
            continue
        matched = True
        for t in (t for t in tokens if t.is_match):
            if t.key in device:
                actual = device[t.key]
            elif t.key == "ATTRS":
                actual = usb.get(t.attr or "", "")
            elif t.key == "ENV":
                actual = result.env.get(t.attr or "", "")
            else:
                raise AssertionError(f"the simulator does not know {t.key}")
            if _glob(actual, t.value) != (t.op == "=="):
                matched = False
                break
        if not matched:
            continue
        for t in (t for t in tokens if not t.is_match):
            value = _expand(t.value, result.env)
            if t.key == "GOTO":
                skip_to = t.value
            elif t.key == "ENV":
                result.env[t.attr or ""] = value
            elif t.key == "GROUP":
                result.group = value
            elif t.key == "MODE":
                result.mode = value
            elif t.key == "SYMLINK":
                links.extend(value.split())
            # IMPORT{builtin}: the properties are given in ``env``, as 60-serial.rules sets them.
    result.symlinks = tuple(links)
    return result


ESP32 = {"idVendor": "303a", "idProduct": "1001"}
CH340 = {"idVendor": "1a86", "idProduct": "7523"}
PORT = {"ID_PATH_TAG": "platform-fd500000_pcie-pci-0000_01_00_0-usb-0_1_3_1_0"}


def test_esp32_with_serial_number_gets_a_stable_name_and_access() -> None:
    env = {"ID_SERIAL_SHORT": "F4:12:FA:4B:2C:10", "ID_USB_INTERFACE_NUM": "00", **PORT}
    r = simulate(ESP32, env)
    assert r.symlinks == ("fayd/esp32-F4:12:FA:4B:2C:10",)
    assert (r.group, r.mode) == ("dialout", "0660")
    assert r.env["ID_MM_DEVICE_IGNORE"] == "1"


def test_adapter_without_serial_number_is_named_by_usb_port() -> None:
    r = simulate(CH340, {"ID_SERIAL_SHORT": "", "ID_USB_INTERFACE_NUM": "00", **PORT})
    assert r.symlinks == (f"fayd/ch340-{PORT['ID_PATH_TAG']}",)


def test_second_interface_gets_a_suffix() -> None:
    env = {"ID_SERIAL_SHORT": "ABC123", "ID_USB_INTERFACE_NUM": "02", **PORT}
    assert simulate(ESP32, env).symlinks == ("fayd/esp32-ABC123-if02",)


def test_other_devices_and_removals_are_left_alone() -> None:
    arduino = {"idVendor": "2341", "idProduct": "0043"}
    r = simulate(arduino, {"ID_SERIAL_SHORT": "X1", **PORT})
    assert (r.symlinks, r.group, r.mode) == ((), None, None)
    assert "ID_MM_DEVICE_IGNORE" not in r.env
    assert simulate(ESP32, {"ID_SERIAL_SHORT": "X1"}, action="remove").symlinks == ()
