"""Execute every notebook in notebooks/ top to bottom: ``python notebooks/run.py [--write] [names...]``.

Each notebook runs with nbclient on the ``python3`` kernel (the ipykernel of the running
interpreter), in a fresh temporary working directory, with a 600 s limit per cell. A notebook
fails when a cell raises, or when an output carries a warning as Python prints one (such as
``DeprecationWarning: ...`` or tqdm's ``TqdmWarning: ...`` on stderr). The script reports each
failure (notebook, cell, what went wrong), runs the remaining notebooks, and exits with status 1.

``--write`` saves each notebook that passed with its new outputs, so that what is committed is
what a run shows (``nox -s notebooks -- --write`` does it in the session's virtualenv). The
saved file is stable: no timings, streams merged per cell, cell ids ``cell-00``, ``cell-01``,
... by position, and the notebook's metadata as it was; re-running changes only outputs that
really changed (the dates the memory loop prints, for one).
"""

from __future__ import annotations

import copy
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

HERE = Path(__file__).resolve().parent
KERNEL = "python3"
TIMEOUT = 600
#: A warning as Python prints it (``DeprecationWarning: ...``, ``TqdmWarning: ...``), not the word in a memory's text.
WARNING = re.compile(r"\b[A-Z]\w*Warning\b:")
#: Cell metadata that front-ends and executors add on their own (timings, view state).
VOLATILE_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")


def output_text(output: dict) -> str:
    """The text an output shows: a stream's text, a result's ``text/plain``, an error's traceback."""
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    if output.get("output_type") == "error":
        return "\n".join([f"{output.get('ename')}: {output.get('evalue')}", *output.get("traceback", [])])
    return str(output.get("data", {}).get("text/plain", ""))


def warnings_in(nb: nbformat.NotebookNode) -> list[str]:
    """One line per output that carries a warning: ``cell N: <the line>``."""
    found = []
    for n, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            found += [f"cell {n}: {line.strip()}" for line in output_text(output).splitlines() if WARNING.search(line)]
    return found


def normalise(nb: nbformat.NotebookNode, metadata: dict) -> None:
    """Make the executed notebook stable to commit: ids by position, no timings, the old metadata."""
    nb.metadata = metadata
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n:02d}"
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        for output in cell.get("outputs", []):
            if "metadata" in output:
                output.metadata = {}


def run(path: Path, *, write: bool = False) -> str | None:
    """Execute ``path``; return ``None`` on success, else a report of what failed.

    With ``write``, a notebook that passed is saved with its outputs.
    """
    nb = nbformat.read(path, as_version=4)
    metadata = copy.deepcopy(nb.metadata)
    with tempfile.TemporaryDirectory(prefix=f"nb-{path.stem}-") as cwd:
        client = NotebookClient(
            nb,
            timeout=TIMEOUT,
            kernel_name=KERNEL,
            resources={"metadata": {"path": cwd}},
            record_timing=False,
            coalesce_streams=True,
        )
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as e:
            return str(e)
    found = warnings_in(nb)
    if found:
        return "outputs with a warning (fix its cause, or filter it in the cell that triggers it):\n" + "\n".join(found)
    if write:
        normalise(nb, metadata)
        nbformat.validate(nb)
        nbformat.write(nb, path)
    return None


def main(argv: list[str]) -> int:
    """Run the notebooks named in ``argv`` (default: all of notebooks/*.ipynb); ``--write`` saves them."""
    write = "--write" in argv
    names = [a for a in argv if a != "--write"]
    paths = [Path(a).resolve() for a in names] or sorted(HERE.glob("*.ipynb"))
    if not paths:
        print(f"no notebooks in {HERE}", file=sys.stderr)
        return 1
    failed = []
    for path in paths:
        start = time.perf_counter()
        error = run(path, write=write)
        took = time.perf_counter() - start
        if error is None:
            print(f"{'written' if write else 'ok':<8}{path.name} ({took:.1f} s)")
        else:
            failed.append(path.name)
            print(f"FAILED  {path.name} ({took:.1f} s)\n{error}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(paths)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
