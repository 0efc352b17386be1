"""A real headless Chromium for the browser tests: Debian's build, driven by Playwright.

Run with `nox -s browser` (it builds the docs site first). `.ci/run` installs the browser with
apt when it is missing (`apt-get install --no-install-recommends chromium`); Playwright's own
browser download is never used. Set ``ELASTIC_MEMORY_CHROMIUM`` to use another executable and
``ELASTIC_MEMORY_SCREENSHOTS`` to a folder to keep the screenshots (the docs' images are made so).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api as playwright_sync


def chromium_path() -> str:
    """The system Chromium executable, or a failure that says how to install it."""
    found = os.environ.get("ELASTIC_MEMORY_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "no Chromium found: install Debian's (`apt-get install --no-install-recommends chromium`) "
            "or set ELASTIC_MEMORY_CHROMIUM to a Chromium executable"
        )
    return found


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole session (Playwright adds --no-sandbox and --headless itself)."""
    with playwright_sync.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium_path())
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (own context: no cookies or storage shared between tests), 1280x800."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where screenshots go: ``$ELASTIC_MEMORY_SCREENSHOTS`` when set (to refresh the docs' images), else a temp dir."""
    folder = Path(os.environ.get("ELASTIC_MEMORY_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
