"""The local inspector (the ``ui`` extra): browse, search, edit and explain a store in a browser.

``elastic-memory ui --db PATH`` serves it on http://127.0.0.1:8700/ (see ``docs/inspector.md``);
:func:`build_app` makes the ASGI app for a store you opened yourself::

    mem = Memory.open("memory.db")
    app = build_app(mem.as_async(), read_only=True)

Pages are rendered on the server from templates shipped in the package; the only script is the
graph view (``static/graph.js``). Nothing is fetched from the internet at run time.
"""

from __future__ import annotations

from ._app import build_app
from ._security import DEFAULT_HOST, TOKEN_ENV, Address, check_token
from ._serve import serve

__all__ = ["DEFAULT_HOST", "TOKEN_ENV", "Address", "build_app", "check_token", "serve"]
