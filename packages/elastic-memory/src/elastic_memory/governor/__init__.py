"""The memory governor: picks a tier from free RAM and the model's context, and budgets every capability.

``policy`` is pure (tiers, thresholds, budgets), ``shedding`` is pure (queue admission),
``probe`` is the one module that reads the machine. See ``docs/governor.md``.

>>> from elastic_memory.governor import Tier, choose_tier, profile_for
>>> tier = choose_tier(available_ram_bytes=2 << 30, context_tokens=8_192, has_llm=False)
>>> profile_for(tier, context_tokens=8_192, has_llm=False).llm_extraction
False
"""

from __future__ import annotations

from .policy import MemoryProfile, Tier, choose_tier, profile_for
from .probe import Governor, RamProbe, available_ram_bytes
from .shedding import Admission

__all__ = [
    "Admission",
    "Governor",
    "MemoryProfile",
    "RamProbe",
    "Tier",
    "available_ram_bytes",
    "choose_tier",
    "profile_for",
]
