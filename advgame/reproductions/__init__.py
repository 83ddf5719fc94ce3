"""The experiments of the papers advgame implements, one module (or package) per paper, named
after it (docs/references.md); ``advgame reproduce PAPER`` runs one.

===================  ==========================================================
module               paper
===================  ==========================================================
``fathony2018a``     Fathony et al. (2018a), Tables 2, 4, 5 and 6 (and
                     ``advgame compare``, the same protocol on your data)
``farnia_tse2016``   Farnia and Tse (2016), §5
``fathony2018b``     Fathony et al. (2018b), Table 1
``wang_qiao2022``    Wang and Qiao (2022), Tables 1-3
``blondel2019``      Blondel (2019), Tables 1, 2, 4, 6 and 7
===================  ==========================================================

Each has ``run(quick=False, out=None, print_fn=print, progress=True)``, as the timing
benchmarks of :mod:`advgame.benchmarks` (whose report writer and protocol helpers they share): it
prints the tables with the published numbers beside ours, writes ``out`` when given (``.json``:
the metadata and the records; ``.md``: the report) and returns the records; ``quick`` runs small
settings (for tests; the numbers are not comparable).  Progress goes to stderr: lines and, in a
terminal, a ``tqdm`` bar over the splits, data sets or fits; ``progress=False`` is quiet.
"""
