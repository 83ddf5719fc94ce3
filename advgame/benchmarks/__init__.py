"""The timing benchmarks run by ``advgame bench`` (speed is measured here, never asserted in tests).

Each module (``oracle``, ``train``, ``kernel``, ``graph``, ``projections``, ``compile``,
``auto``) has
``run(quick=False, out=None, print_fn=print, progress=True)``: it checks every answer before
timing it, prints its report (``print_fn``; progress goes to stderr: a line per case and, in a
terminal, a ``tqdm`` bar over the cases; ``progress=False`` is quiet), writes ``out`` when given
(``.json``: the metadata and the records; ``.md``: the report) and returns the records;
``quick`` runs its small ``QUICK`` settings (seconds, for tests) instead of ``FULL`` (minutes).  :mod:`.report` is the
report writer they share with :mod:`advgame.reproductions`, :mod:`.protocol` the progress lines,
median timings and significance marks.
"""
