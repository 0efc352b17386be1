"""The public facades: ``Memory`` and ``AsyncMemory``, their views, the operations behind them.

The facts, lessons and graph views, the operations (``MemoryOps``), paging.
"""
