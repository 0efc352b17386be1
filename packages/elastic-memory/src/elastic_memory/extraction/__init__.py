"""Extraction: turning one exchange into proposed facts, memories, entities and relations (pure, no I/O).

Three paths, in increasing cost, all funnelled through the same guards by :func:`apply_policy`
(which include :func:`detect`, the model-free poisoning detector):
:func:`capture_facts` (inline rules), :class:`HeuristicExtractor` (model-free, the worker's default
and fallback) and :class:`LLMExtractor` (one prompt, tolerant parsing; the worker makes the call).

>>> from elastic_memory.extraction import HeuristicExtractor, Turn
>>> result = HeuristicExtractor().extract(Turn("By the way, remember that I take my coffee black.", "Noted!"))
>>> [m.content for m in result.memories]
['User takes their coffee black.']
"""

from . import poisoning_languages as _poisoning_languages  # noqa: F401  (registers its cue sets)
from .cues import ENGLISH, LanguageCues, cues_for, register_cues, register_poisoning_cues
from .guards import (
    GuardReason,
    check_entity,
    check_fact,
    check_memory,
    check_relation,
    check_text,
    looks_like_instruction,
)
from .heuristic import HeuristicExtractor
from .llm import LLMExtractor, MalformedOutput
from .poisoning import FAMILIES, Flag, detect
from .policy import ExtractionPolicy, apply_policy
from .rules import ENGLISH_RULES, KEYS, FactRule, capture_facts, register_rules
from .values import (
    EntityCandidate,
    Extraction,
    Extractor,
    FactCandidate,
    MemoryCandidate,
    Rejection,
    RelationCandidate,
    Turn,
)

__all__ = [
    # values
    "EntityCandidate",
    "Extraction",
    "FactCandidate",
    "MemoryCandidate",
    "Rejection",
    "RelationCandidate",
    "Turn",
    # policy and guards
    "ExtractionPolicy",
    "GuardReason",
    "apply_policy",
    "check_entity",
    "check_fact",
    "check_memory",
    "check_relation",
    "check_text",
    "looks_like_instruction",
    # poisoning
    "FAMILIES",
    "Flag",
    "detect",
    "register_poisoning_cues",
    # languages and rules
    "ENGLISH",
    "ENGLISH_RULES",
    "KEYS",
    "FactRule",
    "LanguageCues",
    "capture_facts",
    "cues_for",
    "register_cues",
    "register_rules",
    # extractors
    "Extractor",
    "HeuristicExtractor",
    "LLMExtractor",
    "MalformedOutput",
]
