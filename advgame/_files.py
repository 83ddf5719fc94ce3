"""Reading user files safely: only regular files, bounded reads, UTF-8 with a byte-order mark.

Shared by the loss-matrix reader (:meth:`advgame.losses.LossMatrix.from_csv`), the data reader
(:func:`advgame.datasets.load_csv`) and the command line.
"""

import os
import stat

from .exceptions import SizeLimitError

__all__ = ["check_regular_file", "read_text_file"]

_FILE_KINDS = (
    (stat.S_ISDIR, "Is a directory"),
    (stat.S_ISCHR, "Is a character device"),
    (stat.S_ISBLK, "Is a block device"),
    (stat.S_ISFIFO, "Is a named pipe (FIFO)"),
    (stat.S_ISSOCK, "Is a socket"),
)


def _not_regular(path, mode, what):
    kind = next((name for test, name in _FILE_KINDS if test(mode)), "Not a regular file")
    return ValueError(
        f"{path}: {kind}; {what} must be a regular file (a directory, device or pipe is refused "
        "before it is opened: it could block or never end)."
    )


def check_regular_file(path, what="the file"):
    """Refuse ``path`` unless it is a regular file, by :func:`os.stat` (without opening it).

    Raises :class:`OSError` (its own message) for a missing file and :class:`ValueError` naming
    ``what`` for a directory, device (``/dev/zero``), FIFO or socket.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(os.fspath(path), info.st_mode, what)
    return info


def read_text_file(path, max_bytes, limit_name="MAX_CSV_BYTES", what="a CSV file", hint=""):
    """The text of the regular file ``path``, read as UTF-8 (a byte-order mark dropped).

    Anything but a regular file (a directory, ``/dev/zero``, a FIFO, a socket) is refused with
    :func:`os.stat` before it is opened, and again on the open descriptor (opened non-blocking),
    so a file swapped in between cannot block either; at most ``max_bytes + 1`` bytes are ever
    read, even from a file whose reported size is 0 (as under ``/proc``).

    Raises
    ------
    OSError
        The file does not exist or cannot be read (its own message).
    ValueError
        Not a regular file, or not UTF-8 text.
    SizeLimitError
        Over ``max_bytes`` bytes (the message names ``limit_name``).
    """
    path = os.fspath(path)

    def too_large(size):
        return SizeLimitError(
            f"{path}: the CSV file has {size} bytes, over the limit of {max_bytes:,} "
            f"({limit_name}){hint}"
        )

    info = check_regular_file(path, what)  # OSError (missing file) has its own message
    if info.st_size > max_bytes:
        raise too_large(f"{info.st_size:,}")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):  # replaced between the two checks
            raise _not_regular(path, mode, what)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise too_large(f"more than {max_bytes:,}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not a readable CSV text file (expected UTF-8 text; {exc})."
        ) from None
