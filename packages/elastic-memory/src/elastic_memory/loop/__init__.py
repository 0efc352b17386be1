"""The memory loop: ``build_context`` / ``record_turn``, the governor around them, the worker behind."""

from .config import LoopConfig
from .engine import MemoryLoop
from .inputs import check_loop_args

__all__ = ["LoopConfig", "MemoryLoop", "check_loop_args"]
