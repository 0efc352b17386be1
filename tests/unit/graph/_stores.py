"""Stores the graph tests share (with ``tests/unit/retrieval``'s graph nudge)."""

from __future__ import annotations

from elastic_memory import Memory


def vet_store(mem: Memory) -> tuple[str, str]:
    """A memory reachable from "Biscuit" only through the graph (it shares no word with the query)."""
    biscuit = mem.record_turn("Our dog Biscuit chewed my slippers again.", "Naughty dog!", session_id="s1")
    vet = mem.record_turn("Dr. Okonkwo prescribed drops, twice daily.", "Hope it helps.", session_id="s1")
    mem.record_turn("Today Biscuit and Dr. Okonkwo got along well.", "Lovely.", session_id="s1")
    mem.record_turn("Again Biscuit visited Dr. Okonkwo.", "Good.", session_id="s1")
    return biscuit.chunk_ids[0], vet.chunk_ids[0]
