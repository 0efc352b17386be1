"""Per-language cue sets: the phrases extraction looks for, registered by language code.

English (``"en"``) is registered at import; another language is one ``register_cues`` call (its fact
patterns are registered separately, with :func:`~elastic_memory.extraction.rules.register_rules`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import UsageError

__all__ = ["ENGLISH", "LanguageCues", "cues_for", "injection_patterns", "register_cues"]

_LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})?")


Patterns = tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class LanguageCues:
    """Everything language-specific the extractors use. Unset cues simply never fire."""

    language: str
    """Lowercase language code, e.g. ``"en"`` or ``"pt-br"``."""
    remember_framings: Patterns = ()
    """Matched at sentence start and stripped: "please remember that", "fyi", ..."""
    interjections: re.Pattern[str] | None = None
    """Sentence openers to skip before looking for a framing or preference: "oh,", "by the way", ..."""
    preference_patterns: Patterns = ()
    """Matched at sentence start: the sentence states a lasting preference."""
    standing_requests: Patterns = ()
    """Matched at sentence start; group ``request`` (and optional ``marker``): "please always answer in French"."""
    howto_markers: Patterns = ()
    """Searched in the user text; group ``task``: "how do I reset my router"."""
    step_markers: Patterns = ()
    """Matched per reply line; group ``step``: "1. Unplug it", "- Wait"."""
    sequence_markers: Patterns = ()
    """Matched at sentence start in the reply and stripped: "first", "then", "finally"."""
    importance_words: frozenset[str] = frozenset()
    date_pattern: re.Pattern[str] | None = None
    small_talk: frozenset[str] = frozenset()
    """Words that, alone, make a message small talk: "hi", "thanks", "ok", ..."""
    injection_patterns: Patterns = ()
    """Instruction-injection phrases; the guards test every registered language's set."""
    stopwords: frozenset[str] = frozenset()
    """Capitalised words that do not start an entity name ("The", "My", "Click")."""
    person_markers: frozenset[str] = frozenset()
    """Words after which a capitalised name is a person ("wife", "friend")."""
    calendar_words: frozenset[str] = frozenset()
    """Lowercase month and weekday names."""
    name_particles: frozenset[str] = frozenset()
    fillers: tuple[str, ...] = ()
    """Lowercase phrases trimmed from either end of a value ("by the way", "now", "though")."""
    function_words: frozenset[str] = frozenset()
    """Skipped when a value becomes a key segment ("the", "to", "my")."""
    vague_values: frozenset[str] = frozenset()
    """First words that make a value meaningless ("it", "that", "you")."""
    negations: frozenset[str] = frozenset()
    hypotheticals: frozenset[str] = frozenset()
    question_starts: frozenset[str] = frozenset()
    reported_speech: re.Pattern[str] | None = None
    clause_boundary: re.Pattern[str] | None = None
    """Where a value ends: punctuation and conjunctions ("," " and " " because ")."""
    aliases: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Slot words folded together before they become keys ("mom" -> "mother", "puppy" -> "dog")."""

    def __post_init__(self) -> None:
        if not isinstance(self.language, str) or not _LANGUAGE.fullmatch(self.language):
            msg = f"language {self.language!r} is not a lowercase language code; use e.g. 'en' or 'pt-br'"
            raise UsageError(msg)


_REGISTRY: dict[str, LanguageCues] = {}
_INJECTION: dict[str, Patterns] = {"all": ()}


def register_cues(cues: LanguageCues) -> None:
    """Register (or replace) the cue set for ``cues.language``."""
    if not isinstance(cues, LanguageCues):
        msg = f"register_cues() takes a LanguageCues, not {type(cues).__name__}"
        raise UsageError(msg)
    _REGISTRY[cues.language] = cues
    _INJECTION["all"] = tuple(dict.fromkeys(p for c in _REGISTRY.values() for p in c.injection_patterns))


def cues_for(language: str) -> LanguageCues:
    """The registered cue set for ``language``; a UsageError names the registered ones."""
    try:
        return _REGISTRY[language]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_REGISTRY))
        msg = f"no cues registered for language {language!r} (registered: {known}); add them with register_cues()"
        raise UsageError(msg) from None


def injection_patterns() -> Patterns:
    """Every registered language's instruction-injection patterns."""
    return _INJECTION["all"]


# --- English -----------------------------------------------------------------------------------------------


def _p(*patterns: str) -> Patterns:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_IM = r"i(?:'m|\s+am|m)"
_ADV = r"(?:(?:really|also|absolutely|just|totally|truly|much|generally|usually|always|definitely|strongly)\s+)?"
_VAGUE = _words(
    "it that this them they you your him her me us there here something anything everything nothing stuff things "
    "how what when where why which who whatever so too very if not no never being"
)
ENGLISH = LanguageCues(
    language="en",
    remember_framings=_p(
        r"^(?:please\s+)?(?:remember|don'?t\s+forget|do\s+not\s+forget|note|make\s+a\s+note|take\s+note|keep\s+in\s+mind"
        r"|bear\s+in\s+mind)(?:\s+(?:that|this))?(?!\s*(?:when|how|what|where|who|why|whether|if|me)\b)\s*[,:;-]?\s+",
        r"^(?:for\s+the\s+record|just\s+so\s+you\s+know|fyi|for\s+your\s+information|for\s+future\s+reference"
        r"|(?:just\s+)?a\s+heads[\s-]up)\s*[,:;-]?\s*",
    ),
    interjections=_re(
        r"^(?:(?:by\s+the\s+way|btw|oh|ah|also|and|ok(?:ay)?|so|hey|hi|hello|well|anyway|actually|one\s+more\s+thing)"
        r"\b[\s,:;.!-]*)+"
    ),
    preference_patterns=_p(
        rf"^i\s+{_ADV}{_ADV}(?:prefer|like|love|enjoy|adore|hate|dislike|detest|can'?t\s+stand|cannot\s+stand"
        r"|(?:don'?t|do\s+not)\s+(?:really\s+)?(?:like|enjoy|eat|drink|use))\b"
        r"(?!\s+(?:it|that|this|you|your|how|what|when|to\s+(?:think|know|say))\b)",
        r"^i(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)\b",
        r"^my\s+(?:absolute\s+|all[\s-]time\s+)?favou?rite\b",
        rf"^{_IM}\s+(?:an?\s+)?(?:vegetarian|vegan|pescatarian|teetotal|sober|lactose[\s-]intolerant|gluten[\s-]free"
        r"|left[\s-]handed|colou?r[\s-]?blind|diabetic|celiac|coeliac)\b",
        r"^i\s+(?:always|usually|normally|typically|never|only)\s+"
        r"(?!(?:said|say|says|thought|think|knew|know|meant|mean|get|got|did|do|forget|wonder|wondered)\b)[a-z]",
        r"^i\s+(?:take|drink|have|like)\s+my\s+(?:coffee|tea)\b",
    ),
    standing_requests=_p(
        r"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+|pls\s+|kindly\s+)?(?:(?:you\s+(?:should|must)"
        r"|i\s+(?:want|need)\s+you\s+to|i(?:'d|\s+would)\s+like\s+you\s+to)\s+)?(?P<request>(?:always|never)\s+"
        r"(?!mind\b)\w.{0,300}?)(?:,?\s+(?P<marker>from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future))?"
        r"(?:,?\s+please)?\s*[.!?]*$",
        r"^(?P<marker>from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future)\s*,?\s+(?:please\s+)?"
        r"(?:you\s+(?:should|must)\s+)?(?P<request>(?!i\b|i'|we\b)\w.{0,300}?)\s*[.!?]*$",
    ),
    howto_markers=_p(
        r"\b(?:how\s+(?:do|can|should|would|could|might)\s+(?:i|we|one)|how\s+to|what(?:'s|\s+is|\s+are)\s+the\s+"
        r"(?:best\s+)?(?:steps|way|process|procedure)\s+(?:to|for)|walk\s+me\s+through(?:\s+how\s+to)?|steps\s+to)"
        r"\s+(?P<task>[^?.!\n]{3,200})"
    ),
    step_markers=_p(r"^\s*(?:(?:step\s*)?\d{1,2}\s*[.):]|[-*\u2022\u00b7\u2013]|\(\d{1,2}\))\s+(?P<step>\S.{0,300})$"),
    sequence_markers=_p(
        r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|after\s+that|afterwards|finally|lastly)\b[\s,:]*"
    ),
    importance_words=_words(
        "important importantly always never remember allergic allergy deadline urgent critical must birthday "
        "anniversary appointment meeting exam interview diagnosed medication pregnant wedding funeral surgery emergency"
    ),
    date_pattern=_re(
        r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
        r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
        r"|today|tomorrow|tonight|yesterday)\b|\d"
    ),
    small_talk=_words(
        "hi hello hey yo hiya thanks thank you thx ty ok okay k kk lol haha hah lmao bye goodbye cya see later cool "
        "nice great good morning night evening yes yeah yep no nope sure np welcome got it alright fine awesome wow "
        "hmm mhm oh ah right please cheers ttyl gn gm much"
    ),
    injection_patterns=_p(
        r"\b(?:ignore|forget|skip|override|bypass)\s+(?:(?:all|any|every|the|your|my|of|these|those)\s+)*(?:previous"
        r"|prior|above|earlier|preceding|former|original|existing|system|initial)\s+(?:instructions?|prompts?|rules"
        r"|directions|directives|guidelines|messages|context|commands)",
        r"\bdisregard\s+(?:(?:all|any|every|the|your|of|these|those)\s+)*(?:previous|prior|above|earlier|preceding"
        r"|instructions?|rules|guidelines|system|safety|programming|prompts?)",
        r"\byou\s+are\s+now\b",
        r"\bnew\s+(?:system\s+)?instructions?\b",
        r"\b(?:system|developer)\s+(?:prompt|message)\b",
        r"(?:^|[.!?:;\n][ \t]{0,5}|\b(?:please|you|now|must|should|will|to)[ \t]+)act\s+as\b",
        r"\bfrom\s+now\s+on,?\s+(?:you|the\s+assistant)\s+(?:must|will|should|shall)\b(?!\s+(?:call|address)\s+me\b)",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|let|(?:reveal|mention)\s+(?:this\s+)?to)\s+the\s+user\b",
        r"\breveal\s+your\b",
        r"\bthe\s+user\s+(?:has\s+|had\s+)?(?:already\s+|explicitly\s+|previously\s+)?(?:confirmed|authori[sz]ed|approved)\b",
        r"\b(?:authori[sz]ed|approved)\s+by\s+(?:the\s+)?(?:user|admin(?:istrator)?|developers?|system)\b",
        r"\boverride\s+(?:your|the|all|any)\s+(?:instructions|rules|safety|guidelines|system|restrictions)",
        r"\bjailbreak|\b(?:dan|developer|god)\s+mode\b",
        r"\bassistant\s*:",
        r"(?:^|\n)[ \t]{0,20}(?:system|user|human)[ \t]{0,5}:",
    ),
    stopwords=_words(
        "i i'm i've i'd i'll the a an my your our their his her its this that these those it we you he she they what "
        "how why when where who which yes no hi hello hey thanks thank please sure ok okay if but and or so also then "
        "first second third next finally lastly step here there just remember note don't do does did can could would "
        "should is are was were will let let's great good nice well oh in on at for to from with by after before as "
        "once open click go select choose press type enter run install add remove make use set turn tap navigate "
        "restart check try find create save put take mix preheat heat cook bake pour wait start stop keep see follow "
        "unplug plug hold fyi btw not all some any every each today tomorrow yesterday user assistant sorry "
        "later maybe sometimes while since because however anyway actually again still now last tonight earlier "
        "soon recently meanwhile usually often never always"
    ),
    person_markers=_words(
        "friend wife husband partner son daughter mother father mom mum dad brother sister boss colleague coworker "
        "boyfriend girlfriend grandma grandpa grandmother grandfather uncle aunt cousin neighbor neighbour mr mrs ms "
        "dr teacher doctor manager fiance fiancee"
    ),
    calendar_words=_words(
        "january february march april may june july august september october november december "
        "monday tuesday wednesday thursday friday saturday sunday"
    ),
    name_particles=_words("van von de da di del della der den du la le bin bint al el ter ten"),
    fillers=tuple(
        "by the way|btw|now|though|too|also|anymore|lol|haha|actually|currently|right now|at the moment|these days|"
        "nowadays|as well|for now|i think|i guess|probably|just|really|very much|so much".split("|")
    ),
    function_words=_words("a an the my your our to of in on at for with and or some very really much more being than"),
    vague_values=_VAGUE,
    negations=_words("not never longer don't doesn't didn't isn't wasn't aren't weren't won't can't cannot nor hardly"),
    hypotheticals=_words(
        "if when whether would could should suppose supposing imagine assuming unless maybe perhaps wish might "
        "hypothetically pretend whenever"
    ),
    question_starts=_words(
        "what what's whats who who's where where's when why how is are am do does did can could will would should was "
        "were have has isn't aren't don't doesn't didn't which whose"
    ),
    reported_speech=_re(
        r"\b(?:said|says|told|tells|wrote|writes|asked|asks|claims?|claimed|thinks?|thought|believes?|heard)\b"
        r"|[\"\u201c\u201d\u00ab\u00bb\u2018]|(?:^|[\s:])'"
    ),
    clause_boundary=_re(
        r"[.!?;:,()\[\]{}\"\u201c\u201d\u00ab\u00bb]|(?<!\s)\s+(?:and|or|but|because|since|so|though|although|which"
        r"|who|whom|whose|where|while|whereas|unless|until|plus|btw|lol|haha)\b|(?<!\s)\s+[-\u2013\u2014]+\s"
    ),
    aliases=dict(
        pair.split("=", 1)
        for pair in "mom=mother mum=mother dad=father puppy=dog kitten=cat fiancee=fiance colour=color".split()
    ),
)
register_cues(ENGLISH)
