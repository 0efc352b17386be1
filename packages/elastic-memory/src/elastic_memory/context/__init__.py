"""What the model sees each turn: budgeted, quoted memory sections (pure, no I/O).

>>> from elastic_memory.context import PlanItem, assemble
>>> plan = assemble({"facts": [PlanItem("User drinks cortado")]}, budgets={"facts": 50}, total_budget=100)
>>> [item.text for item in plan.items()]
['User drinks cortado']
"""

from .plan import PREAMBLE, SECTION_ORDER, SECTION_TITLES, ContextPlan, PlanItem, Section, assemble
from .tokens import TokenCounter, check_counter, estimate_tokens

__all__ = [
    "PREAMBLE",
    "SECTION_ORDER",
    "SECTION_TITLES",
    "ContextPlan",
    "PlanItem",
    "Section",
    "TokenCounter",
    "assemble",
    "check_counter",
    "estimate_tokens",
]
