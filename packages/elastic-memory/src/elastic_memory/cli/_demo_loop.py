"""The memory-loop part of ``elastic-memory demo``: three turns on Monday, a plan on Tuesday."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..facade.memory import Memory

__all__ = ["LOOP_TURNS", "LOOP_QUESTION", "show_loop"]

#: Monday's conversation: (user, reply).
LOOP_TURNS = (
    ("Hello again! My name is Priya and I moved to Porto last month.", "Welcome back, Priya. How is Porto?"),
    ("By the way, remember that I take my coffee black.", "Noted: black coffee."),
    ("Biscuit loved the beach in Matosinhos on Sunday.", "Beagles and beaches go well together!"),
)
LOOP_QUESTION = "Can you suggest a snack to take on a long walk with the dog?"


def show_loop(mem: Memory, out: Console) -> None:
    """Record Monday's turns, then print the plan ``build_context`` makes for Tuesday's question."""
    out.print(Text("The memory loop: record_turn on Monday, build_context on Tuesday", style="bold"))
    turns = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
    turns.add_column("Monday, user")
    turns.add_column("facts captured inline")
    for user, reply in LOOP_TURNS:
        receipt = mem.record_turn(user, reply, session_id="monday")
        turns.add_row(user, ", ".join(receipt.facts) or "-")
    mem.drain()  # the worker embeds and extracts in the background; wait so the demo is complete
    out.print(turns)
    plan = mem.build_context(LOOP_QUESTION, session_id="tuesday")
    title = f"build_context({LOOP_QUESTION!r}) on Tuesday"
    subtitle = f"{plan.tokens} of {plan.budget} tokens, tier {plan.tier}, keep the last {plan.keep_last_n_turns} turns"
    out.print(Panel(Text(plan.render() or "(empty plan)"), title=title, subtitle=subtitle, expand=False))
    out.print(Text("   The host puts this in its system prompt; memories arrive as quoted data.\n", style="dim italic"))
