"""Model-free extraction: the worker's default extractor and the LLM path's fallback."""

from __future__ import annotations

import math
import re

from .cues import LanguageCues, cues_for
from .policy import ExtractionPolicy, apply_policy
from .rules import capture_facts
from .values import EntityCandidate, Extraction, FactCandidate, MemoryCandidate, RelationCandidate, Turn

__all__ = ["HeuristicExtractor"]

_MAX_CHARS = 8000
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
# A title with its full stop belongs to the name: "Dr. Okonkwo" is one entity, not "Dr" and "Okonkwo".
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt)\.[ \t]+)?"
_CAPITALISED = re.compile(rf"(?<![\w']){_TITLE}[{_UPPER}][\w'\u2019&-]*(?:[ \t]+[{_UPPER}][\w'\u2019&-]*){{0,3}}")
_PREVIOUS_WORD = re.compile(r"(\w+)\W*$")
_PETS = frozenset("dog cat hamster parrot rabbit horse bird fish turtle tortoise guinea_pig snake lizard".split())
_FACT_LINKS = {
    "user.employer": ("works_at", "organization"),
    "user.location": ("lives_in", "place"),
    "user.hometown": ("grew_up_in", "place"),
}
# English first-person -> third-person rewriting (other languages keep the user's clause as written).
_LEADS = {"i'm": "is", "im": "is", "i've": "has", "i'd": "would", "i'll": "will"}
_THIRD = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs", "i": "they", "i'm": "they're"}
_SECOND = {"my": "your", "me": "you", "myself": "yourself", "mine": "yours", "i": "you", "i'm": "you're"}
_BE = {"am": "are", "was": "were"}
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "don't": "doesn't", "haven't": "hasn't"}
_MODALS = frozenset(
    "can could will would shall should may might must can't cannot won't wouldn't was did didn't".split()
)
_ADVERBS = frozenset(
    "always never usually often really also only generally normally typically mostly rarely still just actually "
    "sometimes absolutely strongly definitely much".split()
)


class HeuristicExtractor:
    """Facts by rules; preferences, how-tos, entities and the episode's importance by language cues.

    ``episode_importance`` is computed from signal, not a constant::

        0.30
        + 0.12 per captured fact (at most 3)       + 0.10 per preference or standing request (at most 2)
        + 0.15 for an explicit "remember" framing  + 0.10 for a captured how-to
        + 0.05 per importance cue word (at most 3) + 0.05 if the user's text holds a number or date
        + 0.02 per named entity the user mentions (at most 5)
        + min(0.10, 0.02 * ln(1 + user words + reply words / 4))
        - 0.25 if the user's message is only small talk ("hi", "thanks", "ok", "lol")
        clamped to [0.05, 0.95]
    """

    def __init__(self, language: str = "en", *, policy: ExtractionPolicy | None = None) -> None:
        self.language = language
        self.cues: LanguageCues = cues_for(language)
        self.policy = policy if policy is not None else ExtractionPolicy()

    def extract(self, turn: Turn) -> Extraction:
        """Everything this extractor finds in ``turn``, with the policy applied (origin ``heuristic``)."""
        user, reply = turn.user[:_MAX_CHARS], turn.reply[:_MAX_CHARS]
        facts = tuple(capture_facts(user, language=self.language))
        memories, framed = self._preferences(user)
        howto = self._howto(user, reply)
        named = self._capitalised(user)
        entities, relations = self._graph(facts, [*named, *self._capitalised(reply)])
        extraction = Extraction(
            facts=facts,
            memories=(*memories, *([howto] if howto else [])),
            entities=entities,
            relations=relations,
            episode_importance=self._importance(user, reply, facts, memories, framed, howto, named),
            origin="heuristic",
        )
        return apply_policy(extraction, self.policy, turn=turn)

    def importance(self, turn: Turn) -> float:
        """The ``episode_importance`` :meth:`extract` would give ``turn``, without the graph or the guards."""
        user, reply = turn.user[:_MAX_CHARS], turn.reply[:_MAX_CHARS]
        facts = tuple(capture_facts(user, language=self.language))
        memories, framed = self._preferences(user)
        howto, named = self._howto(user, reply), self._capitalised(user)
        return self._importance(user, reply, facts, memories, framed, howto, named)

    def _importance(
        self,
        user: str,
        reply: str,
        facts: tuple[FactCandidate, ...],
        memories: list[MemoryCandidate],
        framed: bool,
        howto: MemoryCandidate | None,
        named: list[EntityCandidate],
    ) -> float:
        words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", user.lower())
        dated = bool(self.cues.date_pattern and self.cues.date_pattern.search(user)) or any(c.isdigit() for c in user)
        small_talk = 0 < len(words) <= 6 and set(words) <= self.cues.small_talk
        score = (
            0.30
            + 0.12 * min(len(facts), 3)
            + 0.10 * min(len(memories), 2)
            + 0.15 * framed
            + 0.10 * (howto is not None)
            + 0.05 * min(len(set(words) & self.cues.importance_words), 3)
            + 0.05 * dated
            + 0.02 * min(len(named), 5)
            + min(0.10, 0.02 * math.log1p(len(user.split()) + len(reply.split()) / 4))
            - 0.25 * small_talk
        )
        return round(min(0.95, max(0.05, score)), 3)

    def _preferences(self, text: str) -> tuple[list[MemoryCandidate], bool]:
        """One semantic memory per stated preference or standing request; whether any was framed "remember"."""
        cues, english = self.cues, self.language == "en"
        memories: list[MemoryCandidate] = []
        any_framed = False
        for raw in _SENTENCES.split(text)[:40]:
            framed, sentence = self._unframe(raw.strip()[:500])
            if not framed and cues.interjections is not None:  # "Oh, and remember that ..."
                framed, sentence = self._unframe(cues.interjections.sub("", sentence, count=1))
            if not sentence or (not framed and len(sentence.split()) < 2):
                continue
            content, importance = None, 0.8 if framed else 0.65
            reminder = framed and sentence.lower().startswith("to ")
            for pattern in cues.standing_requests:
                match = pattern.match(sentence[3:] if reminder else sentence)
                if match:
                    request, marker = match.group("request"), match.groupdict().get("marker")
                    request = request[:1].lower() + request[1:]
                    content = " ".join(
                        [*_swap(request.rstrip(" ,.!?").split(), _THIRD), *([marker.lower()] if marker else [])]
                    )
                    content = f"User asks the assistant to {content}" if english else sentence
                    importance = max(importance, 0.7)
                    break
            if content is None and reminder and english:
                content = "User asked to be reminded " + " ".join(_swap(sentence.split(), _THIRD))
            elif content is None and sentence.rstrip().endswith("?") and not framed:
                continue
            elif content is None and (framed or any(p.match(sentence) for p in cues.preference_patterns)):
                content = _third_person(sentence) if english else sentence
            if content:
                if set(re.findall(r"\w+", sentence.lower())) & cues.importance_words:
                    importance += 0.05
                importance = round(min(importance, 0.95), 3)
                memories.append(
                    MemoryCandidate("semantic", _period(content), importance, 0.85, "preference", "user", raw)
                )
                any_framed = any_framed or framed
        return memories[:5], any_framed

    def _unframe(self, sentence: str) -> tuple[bool, str]:
        """Whether ``sentence`` opens with a "remember" framing, and the sentence without it."""
        for framing in self.cues.remember_framings:
            if match := framing.match(sentence):
                return True, sentence[match.end() :].strip()
        return False, sentence

    def _howto(self, user: str, reply: str) -> MemoryCandidate | None:
        """A procedural memory when the user asks how to do something and the reply gives steps."""
        task = next((m.group("task") for p in self.cues.howto_markers if (m := p.search(user))), None)
        if task is None:
            return None
        steps = [
            m.group("step") for line in reply.splitlines()[:200] for p in self.cues.step_markers if (m := p.match(line))
        ]
        if len(steps) < 2:
            steps = [
                s[m.end() :]
                for s in _SENTENCES.split(reply)[:100]
                for p in self.cues.sequence_markers
                if (m := p.match(s.strip()))
            ]
        steps = [_step(s) for s in steps if _step(s)]
        if len(steps) < 2:
            return None
        task = task.strip().rstrip(" ,;:")
        if self.language == "en":
            task = " ".join(_swap(re.sub(r"\s+please$", "", task, flags=re.IGNORECASE).split(), _SECOND))
        content = f"How to {task}: " + "; ".join(steps)
        if len(content) > 400:
            content = content[:399].rsplit("; ", 1)[0] + "\u2026"
        return MemoryCandidate("procedural", content, 0.6, 0.75, "howto", source="reply")

    def _capitalised(self, text: str) -> list[EntityCandidate]:
        """Capitalised phrases (1-4 words) minus stopwords; a lone sentence-initial word only if seen mid-sentence."""
        cues = self.cues
        found: list[EntityCandidate] = []
        initial: list[EntityCandidate] = []
        for match in _CAPITALISED.finditer(text[:_MAX_CHARS]):
            words = match.group().split()
            while words and re.sub(r"['\u2019]s$", "", words[0].lower()) in cues.stopwords:
                words.pop(0)
            while words and words[-1].lower() in cues.stopwords:
                words.pop()
            name = re.sub(r"['\u2019]s$", "", " ".join(words))
            if len(name) < 2:
                continue
            before = text[max(0, match.start() - 30) : match.start()]
            kind = "unknown"
            if all(w.lower() in cues.calendar_words for w in words):
                kind = "date"
            elif (previous := _PREVIOUS_WORD.search(before)) and previous.group(1).lower() in cues.person_markers:
                kind = "person"
            tail = before.rstrip(" \t")
            starts = len(words) == len(match.group().split()) and (not tail.strip() or tail[-1] in ".!?:\n-*\u2022")
            (initial if starts and len(words) == 1 and kind == "unknown" else found).append(
                EntityCandidate(name, kind, 0.5)
            )
        seen = {entity.name.casefold() for entity in found}
        return found + [entity for entity in initial if entity.name.casefold() in seen]

    def _graph(
        self, facts: tuple[FactCandidate, ...], mentioned: list[EntityCandidate]
    ) -> tuple[tuple[EntityCandidate, ...], tuple[RelationCandidate, ...]]:
        """Typed entities and ``user -> x`` relations from facts, then mentioned names; deduped, at most 20."""
        entities: dict[str, EntityCandidate] = {}
        relations: list[RelationCandidate] = []
        for fact in facts:
            link: tuple[str | None, str] | None = _FACT_LINKS.get(fact.key)
            slot = fact.key[5:-5] if fact.key.endswith("_name") and not fact.key.startswith("user.favorite_") else ""
            if fact.key == "user.name":
                link = (None, "person")
            elif slot:
                link = ("has_pet", "animal") if slot in _PETS else (f"has_{slot}", "person")
            if link is None or not any(c.isupper() for c in fact.value):
                continue
            confidence = min(fact.confidence, 0.8)
            entities.setdefault(fact.value.casefold(), EntityCandidate(fact.value, link[1], min(confidence, 0.7)))
            if link[0]:
                relations.append(RelationCandidate("user", fact.value, link[0], confidence))
        for entity in mentioned:
            known = entities.get(entity.name.casefold())
            if known is None:
                entities[entity.name.casefold()] = entity
            elif known.type == "unknown" and entity.type != "unknown":
                entities[entity.name.casefold()] = EntityCandidate(known.name, entity.type, known.confidence)
        return tuple(list(entities.values())[:20]), tuple(relations)


def _third_person(clause: str) -> str:
    """'I take my coffee black' -> 'User takes their coffee black' (a leading 'my' -> "The user's")."""
    words = clause.split()
    lead = words[0].lower().replace("\u2019", "'") if words else ""
    head: list[str] = []
    if lead in _LEADS:
        head, words = ["User", _LEADS[lead]], words[1:]
    elif lead == "i":
        head, words = ["User"], words[1:]
        while words and words[0].lower() in _ADVERBS:
            head.append(words.pop(0))
        if words:
            head.append(_conjugate(words.pop(0)))
    elif lead == "my":
        head, words = ["The user's"], words[1:]
    return " ".join([*head, *_swap(words, _THIRD)])


def _swap(words: list[str], table: dict[str, str]) -> list[str]:
    """Swap first-person pronouns by ``table`` ("I am" follows: "they are")."""
    out: list[str] = []
    for word in words:
        core = word.rstrip(".,;:!?")
        tail, low = word[len(core) :], core.lower().replace("\u2019", "'")
        if low in _BE and out and out[-1] in ("they", "you"):
            core = _BE[low]
        elif low in table:
            core = table[low]
        out.append(core + tail)
    return out


def _conjugate(word: str) -> str:
    core = word.rstrip(".,;:!?")
    tail, low = word[len(core) :], core.lower().replace("\u2019", "'")
    if low in _IRREGULAR:
        return _IRREGULAR[low] + tail
    if low in _MODALS or not low.replace("'", "").isalpha() or (low.endswith("ed") and not low.endswith("eed")):
        return word
    if low.endswith(("s", "x", "z", "ch", "sh", "o")):
        return core + "es" + tail
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return core[:-1] + "ies" + tail
    return core + "s" + tail


def _step(text: str) -> str:
    step = text.replace("**", "").replace("__", "").strip().rstrip(" .;:")
    return step if len(step) <= 120 else step[:119].rsplit(" ", 1)[0] + "\u2026"


def _period(text: str) -> str:
    text = re.sub(r"[\s,;:.!?-]+$", "", text.strip())
    return text[:1].upper() + text[1:] + "." if text else ""
