"""Shared helpers for the benchmark scripts: environment header, percentiles, plain-text tables."""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (linear interpolation); NaN for no values."""
    clean = [v for v in values if not math.isnan(v)]
    return float(np.percentile(clean, p)) if clean else math.nan


def median(values: Sequence[float]) -> float:
    """The median; NaN for no values."""
    return percentile(values, 50)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def library_source() -> str:
    """Where elastic_memory was imported from, with the git commit when it is a checkout."""
    import elastic_memory

    folder = Path(elastic_memory.__file__).resolve().parent
    commit = _git(folder, "rev-parse", "--short", "HEAD")
    if commit is None:
        return f"{folder} (not a git checkout)"
    dirty = _git(folder, "status", "--porcelain", "--", ".")
    return f"{folder} (git {commit}{', with uncommitted changes' if dirty else ''})"


def environment() -> list[str]:
    """Lines describing the machine and the versions in use (printed at the top of every run)."""
    import elastic_memory
    from elastic_memory.storage.sqlite.driver import driver

    drv = driver()
    return [
        f"date      {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine   {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}",
        f"python    {sys.version.split()[0]}  numpy {np.__version__}  elastic-memory {elastic_memory.__version__}",
        f"library   {library_source()}",
        f"sqlite    driver {drv.name}, SQLite {drv.sqlite_version}, sqlite-vec {drv.vec_version or 'not loadable'}",
    ]


def fmt(value: float | int | str | None, digits: int = 2) -> str:
    """A table cell: numbers rounded, NaN/None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]], digits: int = 2) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[c if isinstance(c, str) else fmt(c, digits) for c in row] for row in rows]  # type: ignore[arg-type]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [v.ljust(widths[0]) if i == 0 else v.rjust(widths[i]) for i, v in enumerate(values)]
        return "  ".join(parts).rstrip()

    rule = "-" * len(line([str(h) for h in headers]))
    out = [title, rule, line([str(h) for h in headers]), rule, *(line(r) for r in cells), rule]
    return "\n".join(out)


def section(title: str) -> None:
    """Print a section heading."""
    print()
    print(f"== {title} ==")


#: Where the scripts' figures go as JSON (``--json``) for ``benchmarks/charts.py``.
RESULTS = REPO / "benchmarks" / "results"


def run_block(args: object = None) -> dict[str, object]:
    """The ``run`` block of a results file: the lines of :func:`environment` and the script's options."""
    block: dict[str, object] = {}
    for line in environment():
        key, _, value = line.partition(" ")
        block[key] = value.strip()
    if args is not None:
        block["args"] = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return block


def write_json(path: str | Path | None, payload: dict[str, object]) -> None:
    """Write ``payload`` (with its ``run`` block first) as JSON at ``path``; nothing when ``path`` is None.

    ``python benchmarks/charts.py`` reads these files from ``benchmarks/results/``.
    """
    if path is None:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_plain(payload), indent=1, allow_nan=False, default=str)
    target.write_text(text + "\n", encoding="utf-8")
    print(f"figures written to {target}")


def _plain(value: object) -> object:
    """JSON-ready: NaN becomes None, numpy scalars plain numbers, tuples lists."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
