# The device's secret ("key" in config.json, given by `fayd devices add`) and what comes
# from it, exactly as fayd computes it (fayd/auth/device_keys.py): the MQTT password, the
# answer to fayd's serial challenge, and the check of an update's signature. HMAC-SHA256
# is written out here: hashlib.sha256 is on every MicroPython port, the hmac module is not.
import binascii
import hashlib

MQTT_LABEL = b"fayd-mqtt-password"
OTA_LABEL = "fayd-ota-v1"
SERIAL_LABEL = "fayd-serial-v1"
_BLOCK = 64


def hmac_sha256(key, msg):
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key + b"\x00" * (_BLOCK - len(key))
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    inner.update(msg)
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
    outer.update(inner.digest())
    return binascii.hexlify(outer.digest()).decode()


def mqtt_password(secret):
    return hmac_sha256(secret.encode(), MQTT_LABEL)


def serial_proof(secret, device, nonce):
    """Proves to fayd over serial that this board holds its device's key: fayd's fresh
    nonce under a label of its own, so a proof is never an MQTT password or a signature."""
    msg = "%s\n%s\n%s\n" % (SERIAL_LABEL, device, nonce)
    return hmac_sha256(secret.encode(), msg.encode())


def ota_message(device, version, files):
    """files: (path, size, sha256) tuples."""
    lines = [OTA_LABEL, device, version]
    for path, size, sha in sorted(files):
        lines.append("%s %d %s" % (path, size, sha))
    return "\n".join(lines).encode()


def same(a, b):
    """Equal strings, compared in a time that does not depend on where they differ."""
    if not isinstance(a, str) or not isinstance(b, str) or len(a) != len(b):
        return False
    diff = 0
    for i in range(len(a)):  # MicroPython's zip() has no strict=
        diff |= ord(a[i]) ^ ord(b[i])
    return diff == 0


def ota_signed(secret, device, version, files, sig):
    return same(hmac_sha256(secret.encode(), ota_message(device, version, files)), sig)
