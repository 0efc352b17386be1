"""Running the inspector with uvicorn until interrupted."""

from __future__ import annotations

from ..facade.async_memory import AsyncMemory
from ._app import build_app
from ._security import Address

__all__ = ["serve"]


async def serve(mem: AsyncMemory, address: Address, *, token: str | None, read_only: bool) -> None:
    """Serve the inspector for ``mem`` at ``address.url`` until Ctrl-C or SIGTERM."""
    import uvicorn  # noqa: PLC0415 - the ui extra, needed only here

    app = build_app(mem, read_only=read_only, address=address, token=token)
    config = uvicorn.Config(app, host=address.host, port=address.port, log_level="warning", lifespan="off")
    await uvicorn.Server(config).serve()
