"""One BLAS thread for the library's vector scans, which are small matrix-vector products.

OpenBLAS splits even a 2,000-row product over every core, and its helper threads then spin
waiting for the next one. Beside the library's other threads (SQLite, the embedder) and the
host's, on a machine with few cores, that turned a 30 us scan into milliseconds. A scan
runs inside :func:`one_thread`: the BLAS libraries loaded in the process use one thread
for its duration (``threadpoolctl``; about 40 us), and none of their threads spins.

OpenBLAS's thread count is process-wide, so ``threadpoolctl`` lets one Python thread set it
(the first that limits it): the library's scans run on its own event loop's thread. When
another thread of the host controls it, the limit is left to the host.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["one_thread"]

log = logging.getLogger("elastic_memory")

_controller: Any = None
_setup = threading.Lock()
_users = 0
_limit: Any = None


def _get_controller() -> Any:
    """The process's controller; ``False`` when threadpoolctl cannot be imported (scans then run as they are)."""
    global _controller  # noqa: PLW0603 - one inspection of the loaded libraries per process
    with _setup:
        if _controller is None:
            try:
                from threadpoolctl import ThreadpoolController  # noqa: PLC0415 - inspects the loaded libraries
            except ImportError:
                log.warning("elastic-memory: threadpoolctl is missing; vector scans use BLAS's own threads")
                _controller = False
            else:
                _controller = ThreadpoolController()
        return _controller


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread for the block; nested blocks share one limit.

    >>> import numpy as np
    >>> with one_thread():
    ...     float((np.ones((4, 3), dtype=np.float32) @ np.ones(3, dtype=np.float32))[0])
    3.0
    """
    global _users, _limit  # noqa: PLW0603 - the limit is process-wide, as the BLAS thread count is
    controller = _get_controller()
    if controller is False:
        yield
        return
    with _setup:
        _users += 1
        if _users == 1:
            _limit = controller.limit(limits=1, user_api="blas")
    try:
        yield
    finally:
        with _setup:
            _users -= 1
            if _users == 0 and _limit is not None:
                _limit.restore_original_limits()
                _limit = None
