"""Execute every notebook in notebooks/ top to bottom: ``python notebooks/run.py [names...]``.

Each notebook runs with nbclient on the ``python3`` kernel (the ipykernel of the running
interpreter), in a fresh temporary working directory, with a 600 s limit per cell. Outputs
are not written back: the notebooks stay committed without them. On a failing cell the
script prints the notebook, the cell and the error, runs the remaining notebooks, and
exits with status 1.
"""

from __future__ import annotations

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


def run(path: Path) -> str | None:
    """Execute ``path``; return ``None`` on success, else a report of the failing cell."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix=f"nb-{path.stem}-") as cwd:
        client = NotebookClient(nb, timeout=TIMEOUT, kernel_name=KERNEL, resources={"metadata": {"path": cwd}})
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as e:
            return str(e)
    return None


def main(argv: list[str]) -> int:
    """Run the notebooks named in ``argv`` (default: all of notebooks/*.ipynb)."""
    paths = [Path(a).resolve() for a in argv] or sorted(HERE.glob("*.ipynb"))
    if not paths:
        print(f"no notebooks in {HERE}", file=sys.stderr)
        return 1
    failed = []
    for path in paths:
        start = time.perf_counter()
        error = run(path)
        took = time.perf_counter() - start
        if error is None:
            print(f"ok      {path.name} ({took:.1f} s)")
        else:
            failed.append(path.name)
            print(f"FAILED  {path.name} ({took:.1f} s)\n{error}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(paths)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
