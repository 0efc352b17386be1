"""What an extraction adds to the knowledge graph (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from ..extraction import Extraction
from ..types import Entity
from .names import canonical
from .tables import EntityWrite, GraphWrite, RelationWrite

__all__ = ["CO_MENTIONED", "USER", "USER_NAME", "graph_write", "known_in", "user_names"]

#: The entity that is the user (``user -works_at-> Acme``); the name they give is an alias of it.
USER = "user"
#: The fact whose value is the user's own name.
USER_NAME = "user.name"
#: Entities of one exchange linked pairwise as co-mentioned (the model-free relation signal).
CO_MENTIONED = 5


def graph_write(found: Extraction, known: Sequence[Entity] = ()) -> GraphWrite | None:
    """The entities and relations an extraction proposes, plus known entities the text names.

    ``known`` are entities already in the graph that the exchange mentions (found by name,
    even where capitalisation alone would not tell: at the start of a sentence). The first
    few entities of the exchange are linked pairwise as ``mentioned_with`` (the model-free
    relation signal, weak until repeated).
    """
    names = user_names(found)
    entities = [EntityWrite(e.name, e.type, e.confidence) for e in found.entities if canonical(e.name) not in names]
    if names:  # "My name is Priya": Priya is the user, one node named both ways
        confidence = max(f.confidence for f in found.facts if f.key == USER_NAME)
        entities.append(EntityWrite(USER, "person", min(confidence, 0.8), tuple(names.values())))
    seen = {canonical(e.name) for e in entities} | set(names)
    for entity in known:
        if canonical(entity.name) not in seen:
            seen.add(canonical(entity.name))
            entities.append(EntityWrite(entity.name, entity.type, min(0.5, entity.confidence)))
    if not entities and not found.relations:
        return None
    relations = [
        RelationWrite(_as_user(r.source, names), _as_user(r.target, names), r.relation, r.confidence, found.origin)
        for r in found.relations
    ]
    named = [e for e in entities if canonical(e.name) != USER][:CO_MENTIONED]
    for i, a in enumerate(named):
        for b in named[i + 1 :]:
            weight = min(a.confidence, b.confidence) * 0.5
            relations.append(RelationWrite(a.name, b.name, "mentioned_with", weight, found.origin))
    return GraphWrite(entities=tuple(entities), relations=tuple(relations))


def user_names(found: Extraction) -> dict[str, str]:
    """The names the user gave as theirs in this extraction (``user.name`` facts), by canonical form.

    >>> from elastic_memory.extraction import FactCandidate
    >>> fact = FactCandidate("user.name", "Priya", 0.9, "profile", "My name is Priya.", "rules")
    >>> user_names(Extraction(facts=(fact,)))
    {'priya': 'Priya'}
    """
    out: dict[str, str] = {}
    for fact in found.facts:
        key = canonical(fact.value) if fact.key == USER_NAME else ""
        if key and key != USER:
            out.setdefault(key, fact.value.strip())
    return out


def _as_user(name: str, names: dict[str, str]) -> str:
    """``user`` for the user's own name, else ``name``."""
    return USER if canonical(name) in names else name


def known_in(text: str, candidates: Sequence[tuple[Entity, str]]) -> list[Entity]:
    """The detected entities whose name (or the alias that matched) appears in ``text`` as written.

    Detection works on case-folded n-grams; requiring the written form keeps a common word
    ("may", "will") from counting as a mention of an entity spelt the same.
    """
    out: dict[int, Entity] = {}
    words = set(text.split())
    folded = text.casefold()
    for entity, key in candidates:
        if canonical(entity.name) == USER:
            continue
        written = entity.name in text or any(a in text for a in entity.aliases)
        phrase = " " in key and key in folded  # a multi-word name is specific enough in any case
        capitalised = " " not in key and key.capitalize() in words
        if written or phrase or capitalised:
            out[entity.id] = entity
    return list(out.values())
