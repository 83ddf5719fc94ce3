"""Silent HiGHS models (:func:`new_highs`), and the banner highspy prints once per process.

highspy prints a two-line banner to the C ``stdout`` when the *first* ``Highs`` of the process
is constructed, before any option can be set.  ``import advgame`` spends it here, silently, so
that no HiGHS model built later in the process (advgame's, or cvxpy's HiGHS interface in the
user's own code) prints it.  This module imports only highspy and the standard library, so the
package's import stays fast.
"""

import contextlib
import ctypes
import os
import sys
import threading
from typing import Any

import highspy

__all__ = ["new_highs"]

_BANNER_LOCK = threading.Lock()
_banner_printed = False


def _flush_c_streams():
    """Flush C's stdio buffers (HiGHS writes with ``printf``), where libc is reachable."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no dlopen(NULL) (Windows): nothing to flush
        pass


@contextlib.contextmanager
def _descriptors_to_devnull(fds=(1, 2)):
    """Point the process' file descriptors ``fds`` at ``os.devnull`` for the block (C output
    included), flushing Python's and C's buffers on both sides so nothing crosses over."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _flush_c_streams()
    saved = []
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no devnull to write to: construct unsilenced rather than not at all
        yield
        return
    try:
        for fd in fds:
            try:
                saved.append((fd, os.dup(fd)))
            except OSError:  # closed descriptor: nothing can be printed there
                continue
            os.dup2(devnull, fd)
        yield
    finally:
        _flush_c_streams()
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


def new_highs() -> Any:
    """A ``highspy.Highs`` with all output off.

    highspy (1.16) prints a two-line banner to the C ``stdout`` when the *first* ``Highs`` of
    the process is constructed, before any option can be set (later ones print nothing until
    their ``output_flag`` allows it).  So the first construction in the process happens here,
    once, under a lock, with file descriptors 1 and 2 pointed at ``os.devnull`` for its
    duration (about a millisecond; anything another thread writes to those descriptors in that
    window is discarded too).  This module does it at import, so HiGHS models built elsewhere in
    the process (cvxpy's HiGHS interface) print no banner either once advgame is imported.
    Models built here also have ``output_flag`` off, so their solves print nothing.
    """
    global _banner_printed
    if not _banner_printed:
        with _BANNER_LOCK:
            if not _banner_printed:
                with _descriptors_to_devnull():
                    h = highspy.Highs()
                    h.setOptionValue("output_flag", False)
                _banner_printed = True
                return h
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


new_highs()  # spend the banner now, silently (see new_highs)
