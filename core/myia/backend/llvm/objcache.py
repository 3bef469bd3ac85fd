"""The on-disk cache of compiled object files: trusted only when verified.

An entry is the machine code of one module, named by its key: a digest of everything
that produced it (the module's IR, the target, the versions of LLVM, llvmlite and this
backend).  The file holds a header with that key and a SHA-256 of its payload:

    b"MYIAOBJ3" | key (64 hex digits) | sha256(payload) (32 bytes) | len(payload) (8) | payload

`load` returns the payload only if the header's key is the key asked for and the
checksum matches, so a truncated, corrupted or swapped file (another module's code in
this slot) is recompiled, never run.  Integrity is not authenticity: whoever can write
the directory can write a valid entry.  So the directory is created private (0700),
and one that is not ours, or that others can write, is not used (with a warning):
on a shared hub, nobody injects native code into another user's kernel.

The place: $MYIA_CACHE_DIR, else $XDG_CACHE_HOME/myia/llvm, else ~/.cache/myia/llvm;
MYIA_CACHE_DIR=off keeps compiled code in memory only.
"""

import hashlib
import os
import stat
import warnings

MAGIC = b"MYIAOBJ3"
_HEADER = len(MAGIC) + 64 + 32 + 8


def default_dir():
    d = os.environ.get("MYIA_CACHE_DIR")
    if d is not None and d.lower() in ("", "0", "off", "none", "no"):
        return None
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "myia", "llvm")


class ObjectCache:
    """Object files by key in directory `path` (None: no disk cache)."""

    def __init__(self, path):
        self.path = path
        self._checked = None  # the directory, once found private (or made so)
        self.refused = {}  # path -> why it is not used (warned once)
        self.rejected = 0  # entries that failed verification (recompiled)

    def _usable_dir(self, create):
        """The directory if it is safe to use (made, private, if `create`), else None."""
        d = self.path
        if d is None:
            return None
        if self._checked == d:
            return d
        try:
            if create and not os.path.isdir(d):
                os.makedirs(d, mode=0o700, exist_ok=True)
            st = os.stat(d)
        except OSError:
            return None
        why = None
        if not stat.S_ISDIR(st.st_mode):
            why = "it is not a directory"
        elif hasattr(os, "getuid") and st.st_uid != os.getuid():
            why = "it belongs to another user"
        elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            why = "other users can write to it"
        if why is not None:
            if d not in self.refused:
                self.refused[d] = why
                warnings.warn(
                    f"myia: not using the compiled-code cache {d}: {why}, so its files could "
                    f"run someone else's code.  Compiled code stays in memory.  Make it "
                    f"private (chmod 700 {d}) or point MYIA_CACHE_DIR at a private one.",
                    RuntimeWarning, stacklevel=4)
            return None
        self._checked = d
        return d

    def load(self, key):
        """The payload stored under `key`, verified, or None."""
        d = self._usable_dir(create=False)
        if d is None:
            return None
        path = os.path.join(d, key + ".o")
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if hasattr(os, "getuid") and st.st_uid != os.getuid() \
                        or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                    return None
                blob = fh.read()
        except OSError:
            return None
        payload = _verified(blob, key)
        if payload is None:
            self.rejected += 1
        return payload

    def store(self, key, payload):
        d = self._usable_dir(create=True)
        if d is None:
            return
        blob = (MAGIC + key.encode() + hashlib.sha256(payload).digest()
                + len(payload).to_bytes(8, "little") + payload)
        tmp = os.path.join(d, f"{key}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, os.path.join(d, key + ".o"))
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _verified(blob, key):
    if len(blob) < _HEADER or not blob.startswith(MAGIC):
        return None
    pos = len(MAGIC)
    if blob[pos:pos + 64] != key.encode():
        return None  # another module's entry in this slot
    digest = blob[pos + 64:pos + 96]
    size = int.from_bytes(blob[pos + 96:pos + 104], "little")
    payload = blob[_HEADER:]
    if len(payload) != size or hashlib.sha256(payload).digest() != digest:
        return None
    return payload
