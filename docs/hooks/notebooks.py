"""MkDocs hook: the committed notebooks of ``notebooks/`` become pages under ``notebooks/``, without a copy.

``docs_dir`` is ``docs/``, and the notebooks live at the repository root. This hook adds each
``notebooks/*.ipynb`` to the site's files as if it were ``docs/notebooks/<name>.ipynb``, before
mkdocs-jupyter looks at the files (a higher event priority), so mkdocs-jupyter renders it from
its committed outputs (``execute: false``).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


@event_priority(100)  # before mkdocs-jupyter's on_files (priority 0) wraps the notebooks
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every committed notebook as ``notebooks/<name>.ipynb``."""
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        # A real source folder (the repository root), not File.generated: mkdocs-jupyter's wrapper
        # finds a notebook's path from src_dir + src_uri.
        uri = f"notebooks/{path.name}"
        files.append(File(uri, str(ROOT), config.site_dir, config.use_directory_urls))
    return files
