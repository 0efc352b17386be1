"""The built docs site in a real browser: pages render offline, diagrams and charts load, search works.

The site is served from ``build/site`` on a loopback port by a plain ``http.server``, the way a
reader would open a local build. Every request the browser makes is recorded: all of them
must go to that server (no web fonts, no CDN scripts). Screenshots of the home page, a guide
and the Performance page are saved in the ``screenshots`` folder (``ELASTIC_MEMORY_SCREENSHOTS``
keeps them).

Build the site first: ``nox -s browser`` does, or ``mkdocs build --strict --site-dir build/site``.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

SITE = Path(__file__).resolve().parents[2] / "build" / "site"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """``build/site`` served on a free loopback port."""
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site at {SITE}: run `mkdocs build --strict --site-dir build/site` (or `nox -s browser`)")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture
def requests(page: Any) -> list[str]:
    """Every URL the page asks for (documents, scripts, styles, images, fonts, workers)."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


def _off_machine(urls: list[str]) -> list[str]:
    return [
        u for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss") and urlsplit(u).hostname != "127.0.0.1"
    ]


def _images(page: Any) -> list[tuple[str, bool]]:
    """Each <img> of the page's content: its URL and whether it loaded (decoded with a width)."""
    return page.eval_on_selector_all(
        "article img", "els => els.map(e => [e.currentSrc || e.src, e.complete && e.naturalWidth > 0])"
    )


def _open(page: Any, url: str) -> None:
    page.goto(url, wait_until="networkidle")


def test_home_page_says_what_ships_and_shows_the_architecture(
    page: Any, site_url: str, requests: list[str], screenshots: Path
) -> None:
    """The landing page: the diagram loads, what ships today is named, one card per framework."""
    _open(page, site_url)
    assert page.locator("article h1").first.inner_text().rstrip("¶ \n") == "elastic-memory"
    text = page.locator("article").inner_text()
    for shipped in ("LangChain", "LlamaIndex", "Haystack", "PostgreSQL", "federation", "MCP server", "inspector"):
        assert shipped in text, f"the home page does not mention {shipped!r}"
    assert "will come later" not in text
    images = _images(page)
    assert any("assets/diagrams/architecture.svg" in src for src, _ in images), images
    assert all(ok for _, ok in images), f"images that did not load: {[s for s, ok in images if not ok]}"
    assert page.locator(".grid.cards > ul > li").count() >= 4, "one card per framework"
    assert page.locator(".md-tabs__link").count() >= 5, "the navigation tabs"
    page.screenshot(path=screenshots / "docs-home.png", full_page=True)
    assert _off_machine(requests) == []


def test_guide_has_tabs_and_copy_buttons(page: Any, site_url: str, requests: list[str], screenshots: Path) -> None:
    """A guide: sync/async content tabs switch, code blocks carry a copy button."""
    _open(page, site_url + "quickstart/")
    assert "Memory in 5 minutes" in page.locator("article h1").first.inner_text()
    page.locator(".tabbed-labels label", has_text="Async").first.click()
    assert page.locator(".tabbed-block:visible code", has_text="AsyncMemory").count() >= 1
    assert page.locator(".tabbed-block:visible code", has_text="with Memory.open").count() == 0
    page.locator(".md-typeset pre").first.hover()
    assert page.locator("button[data-md-type=copy]").count() >= 5, "content.code.copy: a copy button per code block"
    page.screenshot(path=screenshots / "docs-quickstart.png", full_page=True)
    _open(page, site_url + "memory-loop/")
    images = _images(page)
    assert any("assets/diagrams/turn.svg" in src for src, _ in images), images
    assert all(ok for _, ok in images), f"images that did not load: {[s for s, ok in images if not ok]}"
    page.screenshot(path=screenshots / "docs-memory-loop.png", full_page=True)
    assert _off_machine(requests) == []


def test_performance_page_leads_with_charts(page: Any, site_url: str, requests: list[str], screenshots: Path) -> None:
    """The Performance page: its charts (committed SVG) load, the tier table comes before the run log."""
    _open(page, site_url + "performance/")
    images = _images(page)
    charts = [(src, ok) for src, ok in images if "assets/charts/" in src]
    built = {path.name for path in (SITE / "assets" / "charts").glob("*.svg")}
    assert len(built) >= 4, f"expected the benchmark charts in {SITE / 'assets' / 'charts'}, found {built}"
    missing = built - {src.rsplit("/", 1)[-1] for src, _ in charts}
    assert not missing, f"charts built but not shown on the Performance page: {sorted(missing)}"
    assert any("assets/diagrams/vector-tiers.svg" in src for src, _ in images), images
    assert all(ok for _, ok in images), f"images that did not load: {[s for s, ok in images if not ok]}"
    text = page.locator("article").inner_text()
    assert text.index("Which tier") < text.index("Run log"), "the users' table comes before the run log"
    page.screenshot(path=screenshots / "docs-performance.png", full_page=True)
    assert _off_machine(requests) == []


@pytest.mark.parametrize("page_name", ["index", "langchain", "llamaindex", "haystack"])
def test_names_and_install_lines_are_never_broken_or_clipped(
    page: Any, site_url: str, screenshots: Path, page_name: str
) -> None:
    """At the site's width no inline name breaks across lines and no shell line is cut off."""
    page.set_viewport_size({"width": 1280, "height": 900})
    _open(page, site_url + ("" if page_name == "index" else f"{page_name}/"))
    broken = page.eval_on_selector_all(
        "article :not(pre) > code", "els => els.filter(e => e.getClientRects().length > 1).map(e => e.textContent)"
    )
    clipped = page.eval_on_selector_all(
        "article .language-bash pre > code, article .grid.cards pre > code",
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)",
    )
    page.screenshot(path=screenshots / f"docs-width-{page_name}.png", full_page=True)
    assert (broken, clipped) == ([], [])


def test_search_works_offline(page: Any, site_url: str, requests: list[str]) -> None:
    """The built-in search finds pages from the index shipped with the site."""
    _open(page, site_url)
    search = page.locator("input.md-search__input")
    search.click()
    search.type("federation", delay=30)  # keystrokes, as a reader types: the worker searches on input
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=15_000)
    assert results.count() >= 1
    assert "federation" in page.locator(".md-search-result").inner_text().lower()
    assert _off_machine(requests) == []


def test_dark_mode_keeps_diagrams_readable(page: Any, site_url: str, requests: list[str], screenshots: Path) -> None:
    """The palette toggle switches to the dark scheme; the diagrams still load on it."""
    _open(page, site_url + "federation/")
    page.locator("label.md-header__button[for^='__palette']:visible").first.click()
    assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    images = _images(page)
    assert any("assets/diagrams/federation.svg" in src for src, _ in images), images
    assert all(ok for _, ok in images)
    page.locator("article img[src*='federation.svg']").scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "docs-federation-dark.png", full_page=False)
    assert _off_machine(requests) == []


def test_notebook_renders_from_its_committed_outputs(
    page: Any, site_url: str, requests: list[str], screenshots: Path
) -> None:
    """A notebook page (mkdocs-jupyter, not executed): its cells and their outputs are there, nothing fetched."""
    _open(page, site_url + "notebooks/quickstart/")
    assert page.locator(".jp-CodeCell").count() >= 3, "the notebook's code cells"
    assert page.locator(".jp-OutputArea-output").count() >= 1, "the committed outputs"
    page.screenshot(path=screenshots / "docs-notebook-quickstart.png", full_page=False)
    assert _off_machine(requests) == []
