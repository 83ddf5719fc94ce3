"""The report writer every benchmark and reproduction shares.

A run (``run(quick=False, out=None, print_fn=print)`` of each module of :mod:`advgame.benchmarks`
and :mod:`advgame.reproductions`) collects ``meta`` (:func:`run_meta`: the date and the machine,
then the run's settings), one record per measured case and a printed report whose first line is
:func:`report_header`; :func:`publish` prints the report and writes ``--out``
(:func:`write_results`).  The tables of the timing benchmarks are laid out by :func:`table`, with
the number formats :func:`us`, :func:`times` and :func:`dev`.
"""

import json
import os
import platform
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

__all__ = [
    "machine_info",
    "run_meta",
    "report_header",
    "write_results",
    "check_out",
    "publish",
    "table",
    "us",
    "times",
    "dev",
]

#: The libraries whose versions every run records (those that do the work).
LIBRARIES = ("numpy", "scipy", "highspy", "cvxpy")


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_info():
    """Platform, CPU, and the versions of the libraries that do the work."""
    return {
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        **{package: version(package) for package in LIBRARIES},
        "advgame": version("advgame"),
    }


def run_meta(**fields):
    """The metadata of a run: its date (to the minute), :func:`machine_info`, then ``fields``."""
    return {
        "date": datetime.now().isoformat(timespec="minutes"),
        "machine": machine_info(),
        **fields,
    }


def report_header(name, meta, libraries=(), command="advgame bench"):
    """First line of every report: the command, date, machine and library versions
    (``libraries`` names keys of ``meta['machine']``, e.g. ``('numpy', 'scipy')``)."""
    m = meta["machine"]
    versions = ", ".join(f"{lib} {m[lib]}" for lib in libraries)
    return (
        f"{command} {name}, {meta['date']}: {m['platform']}, {m['cpu']}, {m['cpu_count']} "
        f"CPUs (load average {m['load_average']} at start)" + (f"; {versions}" if versions else "")
    )


def write_results(out, meta, records, report, fenced=True):
    """Write ``out``: ``.json`` (metadata and records), or else ``report``, as a fenced text block
    (``fenced``) or as it is (a markdown report)."""
    path = Path(out)
    if path.suffix == ".json":
        path.write_text(json.dumps({**meta, "records": records}, indent=2) + "\n")
    elif fenced:
        path.write_text("```\n" + report + "\n```\n")
    else:
        path.write_text(report + "\n")


def check_out(out):
    """Refuse an unusable ``out`` (not ``.json`` or ``.md``, or in no directory) before the run,
    not after it."""
    if out is None:
        return
    path = Path(out)
    if path.suffix not in (".json", ".md"):
        raise ValueError(f"--out must end with .json or .md; got {str(out)!r}.")
    if not path.parent.is_dir():
        raise ValueError(f"--out: the directory {str(path.parent)!r} does not exist.")


def publish(report, meta, records, out, print_fn):
    """The end of a run: print ``report`` and, with ``out``, write it (:func:`write_results`)."""
    print_fn(report)
    if out is not None:
        write_results(out, meta, records, report)


def table(records, columns, left=1, markdown=False):
    """The lines of a table: a header, then one row per record.

    ``columns`` holds ``(name, cell)`` pairs, ``cell(record)`` giving the text of a cell; the
    first ``left`` columns are left-aligned, the others right-aligned.  Plain text has a rule
    under the header; ``markdown`` gives a markdown table.
    """
    header = [name for name, _ in columns]
    rows = [[cell(r) for _, cell in columns] for r in records]
    if markdown:
        rule = "|" + ":---|" * left + "---:|" * (len(header) - left)
        return [_markdown_row(header), rule] + [_markdown_row(row) for row in rows]
    widths = [max(len(row[j]) for row in [header] + rows) for j in range(len(header))]

    def line(cells):
        return "  ".join(
            c.ljust(w) if j < left else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths))
        )

    return [line(header), "-" * len(line(header))] + [line(row) for row in rows]


def _markdown_row(cells):
    return "| " + " | ".join(cells) + " |"


def us(x):
    """Microseconds (or milliseconds): 3 significant digits up to 1,000, then whole numbers."""
    if x is None:
        return "n/a"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def times(x):
    """A ratio of times."""
    if x is None:
        return "n/a"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 1 else f"{x:.2f}"


def dev(x, missing="n/a"):
    """A deviation, to one significant digit; ``missing`` where there is none."""
    return missing if x is None else f"{x:.0e}"
