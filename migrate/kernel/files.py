"""Byte-faithful file I/O: read and decode Python sources as Python does, write atomically.

A leaf module of the shared kernel. Every function that can fail raises `SourceError`, whose
message names the problem in words a user can act on; callers add the path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterator


class SourceError(ValueError):
    """A file that cannot be read, decoded or written; the message says why."""


@dataclasses.dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the codec that round-trips the bytes: "utf-8-sig" keeps a BOM

    def encode(self, text: str) -> bytes:
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as e:
            raise SourceError(
                f"the rewritten text cannot be encoded as {self.encoding}: {e.reason}"
            ) from e


def read_bytes(path: str) -> bytes:
    """The file's bytes, or a SourceError saying plainly why not."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except IsADirectoryError as e:
        raise SourceError("is a directory, not a file") from e
    except PermissionError as e:
        raise SourceError("permission denied: the file cannot be read") from e
    except FileNotFoundError as e:
        raise SourceError("no such file (or a broken symlink)") from e
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SourceError("symlink loop: the link points back to itself") from e
        raise SourceError(f"cannot read: {e.strerror or e}") from e


def decode_python(data: bytes) -> Decoded:
    """Decode source bytes the way the interpreter does (BOM, then a PEP 263 cookie, else UTF-8)."""
    nul = data.find(b"\x00")
    if nul != -1:
        raise SourceError(f"binary file: NUL byte at offset {nul}")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        raise SourceError(f"bad encoding declaration: {e.msg}") from e
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SourceError(
            f"cannot decode as {encoding} (line {line}, byte 0x{data[e.start]:02x})"
        ) from e
    except LookupError as e:
        raise SourceError(f"unknown encoding {encoding!r} in the coding declaration") from e
    return Decoded(text=text, encoding=encoding)


def atomic_write(path: str, data: bytes, *, expected: bytes | None = None) -> None:
    """Replace the file's content with `data` in one step, or leave it exactly as it was.

    The new bytes go to a temporary file in the same folder, are flushed to disk, take the
    original's mode, and then replace it with os.replace (atomic on POSIX and Windows). A
    symlink is followed, so the link stays a link. With `expected`, the write is refused when
    the file changed since it was read.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as e:
        raise SourceError(f"cannot stat before writing: {e.strerror or e}") from e
    if not st.st_mode & stat.S_IWUSR:
        raise SourceError("file is read-only; not rewritten")
    if expected is not None and read_bytes(real) != expected:
        raise SourceError("file changed on disk while it was being processed; not rewritten")
    tmp = _written_beside(real, data)
    with _discarded_on_failure(tmp):
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        # Not permitted for non-root users; the file then keeps the writer's ownership.
        with contextlib.suppress(PermissionError, AttributeError):
            os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, real)


def _written_beside(path: str, data: bytes) -> str:
    """A temporary file in `path`'s folder holding `data`, flushed to disk; its path."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".trl-migrate.tmp", dir=folder
        )
    except OSError as e:
        raise SourceError(f"cannot create a temporary file beside it: {e.strerror or e}") from e
    with _discarded_on_failure(tmp), os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


@contextlib.contextmanager
def _discarded_on_failure(tmp: str) -> Iterator[None]:
    """Removes the temporary file `tmp` when the block fails; an OSError comes out as a
    SourceError (the original file is untouched)."""
    try:
        yield
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise SourceError(f"write failed, original kept: {e.strerror or e}") from e
        raise


def create_file(path: str, data: bytes) -> None:
    """Create `path` holding `data` in one step, never over an existing file: the bytes go to a
    temporary file beside it, which is then hard-linked to the name (refused if it exists)."""
    tmp = _written_beside(path, data)
    try:
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, path)
        except FileExistsError as e:
            raise SourceError("a file by this name appeared while it was being made") from e
        except OSError as e:
            raise SourceError(f"cannot create the file: {e.strerror or e}") from e
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
