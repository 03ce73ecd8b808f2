# OTA over the link (docs/protocol.md, "Firmware updates"): fayd sends a new app version as
# `command` frames: ota_begin (the manifest: version, files with size and sha256, and its
# signature with this device's key: anything else is refused before a byte is staged), ota_chunk
# (path, offset, base64 data), ota_commit. Files go into the app folder that is not running
# (app_a / app_b); files the running app already has with the same hash are copied, not
# sent. On commit every file's sha256 is checked, then ota.json (read by boot.py) is
# rewritten in one rename: the new folder is "trial" until the app hears from fayd
# (confirm()); boot.py goes back to the previous folder if it is not confirmed by the next
# boot. Every step raises FwError with an error code; nothing here touches the running app.
import binascii
import hashlib
import json
import os
import time

from fayd_fw import FwError, hw
from fayd_fw.auth import ota_signed

SLOTS = ("app_a", "app_b")
POINTER = "ota.json"
MANIFEST = ".ota-manifest.json"
MAX_FILES = 64
MAX_TOTAL = 1024 * 1024
MAX_CHUNK = 8192  # decoded bytes per ota_chunk (fayd sends 2048)
PATH_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/"
HEX = "0123456789abcdef"


def join(folder, name):
    return (folder.rstrip("/") if folder not in ("", "/") else "") + "/" + name


def size_of(path):
    try:
        st = os.stat(path)
    except OSError:
        return -1
    return -1 if st[0] & 0x4000 else st[6]


def sha256_file(path):
    h = hashlib.sha256()
    buf = bytearray(1024)
    with open(path, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(buf if n == len(buf) else memoryview(buf)[:n])
    return binascii.hexlify(h.digest()).decode()


def mkdirs(path):
    so_far = ""
    for part in path.split("/"):
        so_far = so_far + "/" + part if so_far or path.startswith("/") else part
        if part and size_of(so_far) < 0:
            try:
                os.mkdir(so_far)
            except OSError:
                pass  # it exists


def rmtree(path):
    try:
        entries = list(os.ilistdir(path))
    except OSError:
        return
    for e in entries:
        child = path + "/" + e[0]
        if e[1] == 0x4000:
            rmtree(child)
        else:
            os.remove(child)
    os.rmdir(path)


def copy(src, dst):
    mkdirs(dst.rsplit("/", 1)[0])
    buf = bytearray(1024)
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        while True:
            n = fi.readinto(buf)
            if not n:
                break
            fo.write(buf if n == len(buf) else memoryview(buf)[:n])


def read_pointer(root):
    try:
        with open(join(root, POINTER)) as f:
            st = json.load(f)
        if isinstance(st, dict):
            return st
    except (OSError, ValueError):
        pass
    return {"active": "", "state": "ok"}


def write_pointer(root, st):
    tmp = join(root, "ota.tmp")
    with open(tmp, "w") as f:
        json.dump(st, f)
    try:
        os.rename(tmp, join(root, POINTER))  # atomic on littlefs and POSIX
    except OSError:  # FAT: no rename over a file (boot.py then runs the flashed app)
        os.remove(join(root, POINTER))
        os.rename(tmp, join(root, POINTER))


def check_path(path):
    if not isinstance(path, str) or not 0 < len(path) <= 96:
        raise FwError("file path must be a string of 1-96 characters")
    for c in path:
        if c not in PATH_CHARS:
            raise FwError("file path %r: only A-Z a-z 0-9 _ . - /" % path)
    for part in path.split("/"):
        if not part or part[0] == ".":
            raise FwError("file path %r: empty or hidden part" % path)
    return path


class Ota:
    def __init__(self, root, fw, confirm_s=300, device="", key=""):
        self.root = root
        self.fw = fw
        self.device = device
        self.key = key  # the device's secret (config.json "key"); none: no updates
        self.st = read_pointer(root)
        self.job = None  # the transfer in progress: {"version", "slot", "files", "have"}
        self.reset_at = None
        self.confirm_ms = int(confirm_s * 1000)
        self.started = time.ticks_ms()

    @property
    def trial(self):
        return self.st.get("state") == "trial"

    def caps(self):
        """What the hello says about OTA (only once an update has happened)."""
        st = self.st
        if not st.get("active") and "failed" not in st:
            return {}
        out = {"slot": st.get("active") or "", "state": st.get("state", "ok")}
        if st.get("failed"):
            out["failed"] = st["failed"]
        return {"ota": out}

    def confirm(self):
        """The trial version works (it heard from fayd): keep it from now on."""
        if not self.trial:
            return False
        st = {"active": self.st.get("active", ""), "previous": self.st.get("previous", "")}
        st["state"] = "ok"
        st["version"] = self.fw
        write_pointer(self.root, st)
        self.st = st
        hw.record("ota", confirmed=self.fw, slot=st["active"])
        return True

    def tick(self, now):
        if self.reset_at is not None and time.ticks_diff(now, self.reset_at) >= 0:
            self.reset_at = None
            hw.reset("ota")
        if self.trial and time.ticks_diff(now, self.started) > self.confirm_ms:
            hw.log("ota: %s not confirmed in time" % self.fw)
            hw.reset("ota-unconfirmed")  # boot.py goes back to the previous version

    def app_dir(self, slot):
        return join(self.root, slot) if slot else self.root

    # --- commands ----------------------------------------------------------------------------
    def handle(self, name, args):
        """One ota_* command -> extra fields for its ack; FwError when refused."""
        try:
            if name == "ota_begin":
                return self.begin(args)
            if name == "ota_chunk":
                return self.chunk(args)
            if name == "ota_commit":
                return self.commit(args)
            if name == "ota_confirm":
                self.confirm()
                return {"version": self.fw}
        except OSError as exc:  # a full or failing filesystem
            raise FwError("%s: %s" % (name, exc), "ota-io")
        raise FwError("unknown command %r" % name, "unknown")

    def begin(self, args):
        version = args.get("version")
        files = args.get("files")
        if not isinstance(version, str) or not 0 < len(version) <= 32:
            raise FwError("ota_begin: version must be a string of 1-32 characters")
        if not isinstance(files, list) or not 0 < len(files) <= MAX_FILES:
            raise FwError("ota_begin: files must be a list of 1-%d files" % MAX_FILES)
        total = 0
        table = {}
        for f in files:
            if not isinstance(f, dict):
                raise FwError("ota_begin: each file is {path, size, sha256}")
            path = check_path(f.get("path"))
            size = f.get("size")
            sha = f.get("sha256")
            if not isinstance(size, int) or size < 0:
                raise FwError("ota_begin: %s: size must be an integer >= 0" % path)
            if not isinstance(sha, str) or len(sha) != 64 or any(c not in HEX for c in sha):
                raise FwError("ota_begin: %s: sha256 must be 64 lowercase hex digits" % path)
            if path in table:
                raise FwError("ota_begin: %s listed twice" % path)
            table[path] = (size, sha)
            total += size
        if total > MAX_TOTAL:
            raise FwError("ota_begin: %d bytes over %d" % (total, MAX_TOTAL), "too-large")
        self.check_signature(version, table, args.get("sig"))
        active = self.st.get("active") or ""
        slot = SLOTS[1] if active == SLOTS[0] else SLOTS[0]
        staging = join(self.root, slot)
        manifest = {"version": version, "files": files}
        try:
            with open(join(staging, MANIFEST)) as f:
                same = json.load(f) == manifest  # the same update again: resume it
        except (OSError, ValueError):
            same = False
        if not same:
            rmtree(staging)
            mkdirs(staging)
            with open(join(staging, MANIFEST), "w") as f:
                json.dump(manifest, f)
        have = {}
        copied = 0
        for path in table:
            size, sha = table[path]
            dst = join(staging, path)
            n = size_of(dst)
            if n > size:
                os.remove(dst)
                n = -1
            if n < 0:
                src = join(self.app_dir(active), path)
                if size_of(src) == size and sha256_file(src) == sha:
                    copy(src, dst)  # unchanged: not sent again
                    copied += 1
                    n = size
                else:
                    mkdirs(dst.rsplit("/", 1)[0])
                    open(dst, "wb").close()
                    n = 0
            have[path] = n
        self.job = {"version": version, "slot": slot, "files": table, "have": have}
        hw.record("ota", begin=version, slot=slot, copied=copied, resumed=same)
        return {"slot": slot, "have": have}

    def check_signature(self, version, table, sig):
        if not self.key:
            raise FwError("ota_begin: this device has no key: updates are refused", "ota-signature")
        files = [(path, table[path][0], table[path][1]) for path in table]
        if not ota_signed(self.key, self.device, version, files, sig):
            hw.record("ota", refused=version, why="signature")
            raise FwError(
                "ota_begin: the update is not signed with this device's key", "ota-signature"
            )

    def _job(self, name):
        if self.job is None:
            raise FwError("%s: no update in progress (send ota_begin)" % name, "ota-state")
        return self.job

    def chunk(self, args):
        job = self._job("ota_chunk")
        path = args.get("path")
        offset = args.get("offset")
        data = args.get("data")
        if path not in job["files"]:
            raise FwError("ota_chunk: %r is not in the update" % path)
        if not isinstance(offset, int) or offset < 0 or not isinstance(data, str):
            raise FwError("ota_chunk: offset must be an integer >= 0 and data base64")
        if len(data) > MAX_CHUNK * 4 // 3 + 4:
            raise FwError("ota_chunk: over %d bytes" % MAX_CHUNK, "too-large")
        try:
            raw = binascii.a2b_base64(data)
        except ValueError:
            raise FwError("ota_chunk: data is not base64")
        have = job["have"][path]
        if offset > have:
            why = "ota_chunk: %s offset %d, expected %d" % (path, offset, have)
            raise FwError(why, "ota-offset")
        if offset + len(raw) > job["files"][path][0]:
            raise FwError("ota_chunk: %s runs past its size" % path, "too-large")
        with open(join(join(self.root, job["slot"]), path), "r+b") as f:
            f.seek(offset)
            f.write(raw)
        job["have"][path] = max(have, offset + len(raw))
        return {"have": job["have"][path]}

    def commit(self, args):
        job = self._job("ota_commit")
        if args.get("version", job["version"]) != job["version"]:
            raise FwError("ota_commit: the update in progress is %s" % job["version"], "ota-state")
        staging = join(self.root, job["slot"])
        short = []
        bad = []
        for path in job["files"]:
            size, sha = job["files"][path]
            dst = join(staging, path)
            n = size_of(dst)
            if n != size:
                short.append("%s (%d of %d bytes)" % (path, max(n, 0), size))
            elif sha256_file(dst) != sha:
                bad.append(path)
                os.remove(dst)  # sent again after the next ota_begin
                job["have"][path] = 0
        if short:
            raise FwError("ota_commit: incomplete: " + ", ".join(short), "ota-state")
        if bad:
            hw.record("ota", refused=job["version"], bad=bad)
            self.job = None
            raise FwError("ota_commit: sha256 mismatch: " + ", ".join(bad), "ota-hash")
        os.remove(join(staging, MANIFEST))
        st = {
            "active": job["slot"],
            "previous": self.st.get("active") or "",
            "state": "trial",
            "boots": 0,
            "version": job["version"],
            "from": self.fw,
        }
        write_pointer(self.root, st)
        self.st = st
        self.job = None
        self.reset_at = time.ticks_add(time.ticks_ms(), 300)  # after the ack has gone out
        hw.record("ota", committed=job["version"], slot=job["slot"])
        return {"slot": job["slot"], "reboot": True}
