"""Per-language cue sets: the phrases extraction looks for, registered by language code.

English (``"en"``) is registered at import; another language is one ``register_cues`` call (its fact
patterns are registered separately, with :func:`~elastic_memory.extraction.rules.register_rules`).

Memory-poisoning cues (see :mod:`~elastic_memory.extraction.poisoning`) are kept per language too,
and every registered language's cues are tested on every text. German, French and Spanish register
only those (:func:`register_poisoning_cues`): extraction itself stays English-only, so
``cues_for("de")`` still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import UsageError

__all__ = [
    "ENGLISH",
    "FAMILIES",
    "FRENCH_POISONING",
    "GERMAN_POISONING",
    "SPANISH_POISONING",
    "LanguageCues",
    "Patterns",
    "cues_for",
    "poisoning_patterns",
    "register_cues",
    "register_poisoning_cues",
]

_LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})?")


Patterns = tuple[re.Pattern[str], ...]

FAMILIES = ("spoofing", "exfiltration", "payment", "authority", "instruction")
"""The kinds of poisoning, in precedence order: a text matching several is reported under the first.

``spoofing``: role or format markers ("SYSTEM:", "[INST]", "</memory>", "## PROFILE FACTS");
``exfiltration``: requests to reveal or send secrets and files; ``payment``: payment redirections;
``authority``: claims of authority, permission or pre-approval toward the assistant;
``instruction``: directives to the assistant ("from now on you must", "act as", "ignore your rules").
"""


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
    poisoning: Mapping[str, Patterns] = field(default_factory=dict, hash=False)
    """Memory-poisoning cues by family (one of :data:`FAMILIES`); the guards test every registered language's."""
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
        _check_poisoning(self.poisoning)


_REGISTRY: dict[str, LanguageCues] = {}
_POISONING: dict[str, Mapping[str, Patterns]] = {}
_GATES: dict[str, re.Pattern[str]] = {}
_MERGED: dict[tuple[str, ...], Mapping[str, Patterns]] = {}


def register_cues(cues: LanguageCues) -> None:
    """Register (or replace) the cue set for ``cues.language``.

    Its poisoning cues replace the language's registered ones; a set without any keeps them.
    """
    if not isinstance(cues, LanguageCues):
        msg = f"register_cues() takes a LanguageCues, not {type(cues).__name__}"
        raise UsageError(msg)
    _REGISTRY[cues.language] = cues
    if cues.poisoning:
        register_poisoning_cues(cues.language, cues.poisoning)


def register_poisoning_cues(
    language: str, cues: Mapping[str, Patterns], *, present: re.Pattern[str] | None = None
) -> None:
    """Register (or replace) the memory-poisoning cues of ``language`` without any extraction cues.

    ``cues`` maps a family of :data:`FAMILIES` to compiled patterns, searched anywhere in the text.
    ``present``, when given, is a cheap pattern that any text in the language matches (its script,
    its letters, a few of its commonest words): a text it does not match skips the language's cues.
    """
    if not isinstance(language, str) or not _LANGUAGE.fullmatch(language):
        msg = f"language {language!r} is not a lowercase language code; use e.g. 'en' or 'pt-br'"
        raise UsageError(msg)
    if present is not None and not isinstance(present, re.Pattern):
        msg = f"present must be a compiled pattern (re.compile(...)) or None, got {type(present).__name__}"
        raise UsageError(msg)
    _check_poisoning(cues)
    _POISONING[language] = dict(cues)
    _GATES.pop(language, None)
    if present is not None:
        _GATES[language] = present
    _MERGED.clear()


def _merged(languages: tuple[str, ...]) -> Mapping[str, Patterns]:
    merged = _MERGED.get(languages)
    if merged is None:
        sets = [c for language in languages if (c := _POISONING.get(language)) is not None]
        merged = {family: tuple(dict.fromkeys(p for c in sets for p in c.get(family, ()))) for family in FAMILIES}
        _MERGED[languages] = merged
    return merged


def _check_poisoning(cues: Mapping[str, Patterns]) -> None:
    if not isinstance(cues, Mapping):
        msg = f"poisoning cues are a mapping of family -> patterns, not {type(cues).__name__}"
        raise UsageError(msg)
    for family, patterns in cues.items():
        if family not in FAMILIES:
            msg = f"unknown poisoning family {family!r}; use one of {', '.join(FAMILIES)}"
            raise UsageError(msg)
        if not isinstance(patterns, tuple) or not all(isinstance(p, re.Pattern) for p in patterns):
            msg = f"poisoning cues for {family!r} must be a tuple of compiled patterns (re.compile(...))"
            raise UsageError(msg)


def cues_for(language: str) -> LanguageCues:
    """The registered cue set for ``language``; a UsageError names the registered ones."""
    try:
        return _REGISTRY[language]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_REGISTRY))
        msg = f"no cues registered for language {language!r} (registered: {known}); add them with register_cues()"
        raise UsageError(msg) from None


def poisoning_patterns(text: str | None = None) -> Mapping[str, Patterns]:
    """The registered languages' poisoning patterns, by family (every family present).

    With ``text``, only the languages it may be written in (see ``present`` in
    :func:`register_poisoning_cues`); without, every language's.
    """
    languages = tuple(_POISONING)  # a snapshot: a registration may run meanwhile (the worker screens in a thread)
    if text is None:
        return _merged(languages)
    gates = dict(_GATES)
    return _merged(tuple(lang for lang in languages if (gate := gates.get(lang)) is None or gate.search(text)))


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
# Poisoning cues. Each pattern is searched anywhere in the first 4,000 characters; gaps are bounded
# ({0,n}) and never cross a sentence end, so no pattern backtracks more than a few dozen characters.
_NOT_NEGATED = r"(?<!\bnot\s)(?<!n't\s)(?<!\bnever\s)(?<!\bno\s)(?<!\bi\s)(?<!\bwe\s)(?<!'ll\s)(?<!\bwill\s)"
_GAP = (  # up to five words between a verb and a secret, none of them turning the request into a question or a topic
    r"(?:\s+(?!(?:about|regarding|how|why|what|whether|for|on|if|and|or|but"
    r"|to\s+(?:change|reset|create|rotate|make|set|pick|choose))\b)[^\s.!?;,]+){0,5}?"
)
_REVEAL = (
    r"(?:reveal|disclose|leak|expose|share|send|forward|e-?mail|text|post|upload|paste|print|output|display|show"
    r"|list|dump|give|tell|read\s+out|spell\s+out|include|attach|append|embed|insert|provide|hand\s+over|repeat"
    r"|recite|type\s+out|write\s+out|(?:reply|respond|answer)\s+with|give\s+out)"
)
_SECRET = (
    r"(?:pass(?:word|code|phrase)s?|api[\s_-]?keys?|access\s+keys?|secret\s+keys?|private\s+keys?|ssh\s+keys?"
    r"|(?:api|access|auth|bearer|session|refresh|github|slack|admin)\s+tokens?|credentials|secrets|login\s+details"
    r"|(?:credit\s+|debit\s+)?card\s+(?:numbers?|details)|cvv|cvc|pin\s+(?:codes?|numbers?)|(?:bank|card|atm|sim)\s+pins?"
    r"|seed\s+phrases?|recovery\s+(?:phrases?|codes?|keys?)|mnemonic\s+phrases?|(?:2fa|mfa|one[\s-]time|verification)"
    r"\s+codes?|otps?|social\s+security\s+numbers?|system\s+prompt|(?:hidden|secret|initial|original|system|internal)"
    r"\s+(?:instructions|prompt|rules|configuration)|environment\s+variables?|env\s+vars?|\.env\s+files?"
    r"|\w*_(?:api_?key|secret|token|password)\w*)"
    r"(?!\s*(?:generators?|managers?|reset|hints?|polic(?:y|ies)|strength|requirements|rules|fields?|boxes|apps?"
    r"|changes?|expiry|checkers?|length|protected|less|-))"
)
_PATH = (
    r"(?:~|\$home|/home/[\w.-]{1,40}|/root)?/?\.ssh/(?:id_[\w-]{1,20}\b(?!\.pub)|authorized_keys|known_hosts)"
    r"|/etc/(?:passwd|shadow|sudoers)\b|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json"
    r"|\bwallet\.dat\b|\bkeychain\b"
)
_HERE = (
    r"(?=\s*(?:[.!?,;:)]|$|here\b|now\b|so\b|and\s+(?:i|you)\b|(?:of|for|on|over|to)\s+(?:this|the|your)\s+"
    r"(?:system|assistant|ai|bot|model|chat|platform|server|app|service|memory|conversation|instance|deployment)\b"
    r"|(?:of|for|over|to)\s+you\b|with\s+(?:full|root|admin|elevated|special|unrestricted)\b))"
)
_DANGEROUS = (
    r"(?:ignore|bypass|override|disable|circumvent|reveal|share|disclose|leak|break|skip|execute|run|delete"
    r"|transfer|access|send|read|see|view|know|unlock|do\s+anything|say\s+anything|answer\s+anything)"
)
_SENSITIVE = (
    rf"(?:{_SECRET}|your\s+(?:rules|guidelines|instructions|restrictions|filters?|safety|memory|system)"
    r"|the\s+(?:system|assistant|admin\s+panel)|restricted|confidential|classified|internal\s+(?:data|files|documents)"
    r"|private\s+(?:data|files|information)|other\s+(?:users|people)(?:'s?)?\s+(?:data|files|messages|information)"
    r"|(?:all|any)\s+(?:the\s+)?(?:data|files|records|accounts)|everything|anything)"
)
_ACCOUNT = (
    r"(?:(?:bank|crypto|bitcoin|btc|eth|usdt|business|company|offshore)\s+)?(?:account|iban|wallet|address|details"
    r"|beneficiary|payee|routing\s+number)"
)
_LITERAL = (
    r"(?:\b[a-z]{2}\d{2}(?:[ ]?[a-z0-9]{4}){2,7}(?:[ ]?[a-z0-9]{1,4})?\b|\b(?:bc1|[13])[a-hj-np-z0-9]{25,59}\b"
    r"|\b0x[a-f0-9]{40}\b|\baccount\s+(?:number|no\.?|#)\s*[:#]?\s*\d[\d -]{5,20})"
)
_PAY = r"(?:send|wire|transfer|pay|deposit|route|redirect|remit)"
_EN_SPOOFING = _p(
    r"\b(?:new|updated|revised|real|actual|true)\s+(?:system|developer)\s+(?:prompt|message|instructions?)\b",
    r"\b(?:system|developer)\s+(?:prompt|message|note|override)\s*:",
    r"(?:^|[.!?]\s+|\n)[ \t]{0,10}(?:system|developer|admin)\s*(?:message|prompt|note|notice|alert)\s*:",
    r"(?:^|[.!?]\s+|\n)[ \t]{0,10}(?:developer|admin)\s*:",
    r"(?:^|[.!?]\s+|\n)[ \t]{0,10}system\s*(?:update\s*)?:[^\n]{0,120}?\b(?:you|your|assistant|ai|model|must|always"
    r"|never|ignore|override|instructions?|rules|allowed|permitted|verified|authori[sz]ed|the\s+user)\b",
    r"\((?:system|admin|developer)\s+(?:message|note|notice)\)",
    r"\bstored\s+memories\s+about\s+the\s+user\b",
    r"\bend\s+of\s+(?:stored\s+memories|quoted\s+data|user\s+input|(?:the\s+)?memory\s+block|(?:the\s+)?context)\b",
    r"\b(?:end|start|begin)\s+of\s+(?:the\s+)?(?:user|human|assistant|system)\s+(?:message|input|turn|prompt)\b",
    r"(?<![=*#~-])(?:={3,12}|-{3,12}|\*{3,12}|#{3,12}|~{3,12})\s{0,3}(?:operator|system|admin\w*|developer|assistant)\s+(?:note"
    r"|message|notice"
    r"|instructions?)\b|\(\s*not\s+visible\s+to\s+(?:the\s+)?user\s*\)",
)
_EN_EXFILTRATION = _p(
    rf"{_NOT_NEGATED}\b{_REVEAL}\b(?!\s+(?:me\s+|us\s+)?(?:how|why|what|whether|where|when)\b){_GAP}\s+{_SECRET}",
    rf"\b(?:contents?\s+of|cat|read|open|print|send|include|show|upload|paste|output|display|dump|copy|attach|e-?mail"
    rf"|leak|reveal|share)\b[^\n]{{0,60}}?(?:{_PATH})",
    r"\breveal\s+your\b",
    rf"\bwhat(?:'s|\s+is|\s+are|\s+were)\s+(?:your|the\s+admin|the\s+root)\s+{_SECRET}",
    r"\b(?:shar(?:e|ed)|sen[dt]|giv(?:e|en)|reveal(?:ed)?|disclos(?:e|ed)|tell|told|forward(?:ed)?|provid(?:e|ed))\b"
    r"[^.!?\n]{0,60}\b(?:with|to)\s+(?:anyone|anybody"
    r"|everyone|everybody|whoever|any\s+(?:other\s+)?(?:users?|person|caller|one))\s+(?:who|that)\s+(?:asks|requests"
    r"|wants)",
    r"\b(?:forward|send|e-?mail|upload|post|copy|sync|mirror|leak|exfiltrate|transmit|report)\s+(?:a\s+copy\s+of\s+"
    r"|copies\s+of\s+)?(?:(?:all|every|each|the\s+(?:whole|entire|full))\s+)?(?:of\s+)?(?:(?:the|our|my|your|this"
    r"|these|user'?s?)\s+)?(?:conversations?|chats?|chat\s+(?:logs?|history)|conversation\s+(?:logs?|history)"
    r"|messages|memories|memory|transcripts?|logs|history)\b[^.!?\n]{0,60}?\bto\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\."
    r"|(?:this|that|the\s+following|an?\s+external)\s+(?:address|url|server|endpoint|webhook|e-?mail))",
    r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{1,200}[?&][\w.-]{1,40}=",
    r"\b(?:repeat|print|output|show|reveal|recite|copy|dump|list|echo|type\s+out)\b[^.!?\n]{0,20}?\b(?:everything|all"
    r"|the\s+(?:text|words|content|messages?|instructions?))\b[^.!?\n]{0,30}?\b(?:above|before\s+(?:this|my)|preceding"
    r"|prior\s+to\s+(?:this|my))\b",
    r"\bwhat\s+(?:instructions|rules|guidelines|prompts?|directives)\s+(?:were\s+you|have\s+you\s+been|did\s+you)\s+"
    r"(?:given|told|programmed|get|receive)",
    r"\b(?:they|helpline|hotline|support|agents?|bank|staff|team|callers?|representatives?)\s+(?:\w+\s+){0,3}?(?:asks?"
    r"|needs?|requires?|requests?)\s+(?:for\s+)?(?:the\s+|your\s+|my\s+|a\s+)?(?:card\s+)?(?:pin|password|cvv|cvc"
    r"|one[\s-]time\s+code|otp|2fa\s+code|verification\s+code|seed\s+phrase|recovery\s+phrase|login\s+details"
    r"|credentials)\b",
    r"\b(?:send|email|e-mail|forward|give|share)\s+(?:their|your|all|the)\s+(?:passwords?|credentials|pins?|login\s+details)"
    r"\s+to\b",
    r"\b(?:include|add|append|attach|insert)\b[^.!?\n]{0,30}?\b(?:api\s+keys?|tokens?|passwords?|credentials|secrets)\b"
    r"[^.!?\n]{0,30}?\b(?:you(?:'ve|\s+have)\s+seen|from\s+(?:our|the|previous|earlier)|in\s+(?:our|the|previous|earlier))",
    r"\b(?:everything|all|what(?:ever)?)\s+you\s+were\s+(?:told|given|instructed|shown)\s+(?:before|prior)\b"
    r"|\bhidden\s+(?:setup|system|initial|original|developer)\s+(?:text|prompt|instructions|message)\b",
    r"\b(?:post|send|submit|upload|forward|share|include)\b[^.!?\n]{0,80}\b(?:address|date\s+of\s+birth|birth\s*date"
    r"|card\s+(?:number|digits)|last\s+(?:4|four)\s+digits|ssn|passport|phone\s+number|e-?mail\s+address|personal"
    r"\s+(?:data|details|information))\b[^.!?\n]{0,60}?\bto\s+(?:https?://|www\.)",
    r"\b(?:mirror|copy|cc|bcc|forward|send|sync|upload)\w*\b[^.!?\n]{0,60}?[\w.+-]+@[\w-]+\.[\w.]+[^\n]{0,100}?"
    r"\b(?:automatically|silently|no\s+need\s+to\s+mention|without\s+(?:mentioning|telling|asking))\b",
    r"\b(?:bcc|cc)\b[^.!?\n]{0,40}?\b(?:conversation|chat|transcript|messages|history)\b[^.!?\n]{0,40}?\bto\s+"
    r"[\w.+-]+@[\w-]+\.",
    r"\b(?:instructions|rules|guidelines|prompt|directives|setup)\s+(?:you\s+were|you've\s+been|that\s+you\s+were)\s+(?:given"
    r"|told|programmed\s+with|set\s+up\s+with)\b",
    r"\b(?:disclose|reveal|provide|output|print|share)\s+(?:its|your)\s+(?:configuration|config|operating\s+instructions"
    r"|system\s+prompt|instructions|setup)\b",
    r"\bhidden\s+(?:part|section|portion)\s+of\s+(?:your|the)\s+(?:prompt|instructions|setup)\b",
    r"\b(?:facts|preferences|memories|data|information|details|conversations|chats)\s+(?:you\s+have\s+)?(?:about|of|from"
    r"|with)\s+(?:the\s+)?other\s+(?:users|people|customers)\b",
)
_EN_PAYMENT = _p(
    rf"\b{_PAY}\b[^\n]{{0,120}}?{_LITERAL}",
    rf"(?:^|[.!?;:\n][ \t]{{0,5}}|\b(?:please|you|always|kindly|now|instead|should|must|to)\s+){_PAY}\b"
    rf"[^.!?\n]{{0,80}}?\b(?:to|into)\s+(?:(?:the|this|our|a|an|their)\s+)?(?:new|updated|different|following|below|changed|alternate"
    rf"|alternative|other|replacement|correct)\s+{_ACCOUNT}",
    r"\b(?:all|any|future|every|outstanding|pending|remaining|upcoming)\s+(?:\w+\s+){0,2}?(?:payments?|invoices?"
    r"|transfers?|refunds?|wires?|funds|deposits?|payouts?|remittances?)\s+(?:should|must|will|need\s+to|are\s+to|have"
    r"\s+to)\s+(?:now\s+|from\s+now\s+on\s+)?(?:go|be\s+(?:sent|paid|made|wired|transferred|routed|deposited"
    r"|redirected))\s+(?:to|into)\b",
    r"(?<!\bsays\s)(?<!\bsay\s)(?<!\bclaims\s)(?<!\bclaim\s)(?<!\bif\s)(?<!\bthat\s)(?<!\bsaying\s)"
    r"(?<!\bclaiming\s)(?<!\bstating\s)"
    r"\b(?:our|their|the\s+(?:vendor|supplier|company|payee|beneficiary|contractor|client)'?s?)\s+(?:bank(?:ing)?"
    r"|payment|remittance|wire|account)\s+(?:details|information|info|instructions|account)\s+(?:have|has)\s+"
    r"(?:recently\s+|just\s+)?(?:changed|been\s+(?:changed|updated))",
    r"\b(?:update|change|replace|swap|switch)\s+(?:the\s+)?(?:payee|beneficiary)\b(?!\s+(?:details\s+)?(?:for|on|in|of)"
    r"\s+my\b)",
    r"\b(?:banking\s+arrangements|bank\s+details|payment\s+details|remittance\s+details|bank\s+account)\s+(?:were|was"
    r"|have\s+been|has\s+been)\s+(?:recently\s+)?(?:updated|changed|amended|moved)\b",
    r"\b(?:amend|update|change|replace)\s+(?:the\s+)?(?:supplier|vendor|payee|stored|saved)\s+(?:record|bank\s+details"
    r"|details|account|payment\s+details)\b(?!\s+(?:for|on|in|of)\s+my\b)",
    r"\b(?:update|change|switch)\b[^.!?\n]{0,60}\b(?:direct\s+deposit|payroll|payee|beneficiary)\b[^\n]{0,100}?"
    r"\b(?:routing|account|iban|sort\s+code)\b[^\n]{0,20}?\d{6,}",
    rf"\b(?:payments?|invoices?|transfers?|rent|refunds?)\b[^.!?\n]{{0,80}}?\b(?:go|goes|should\s+go|must\s+go|are\s+to\s+go"
    rf"|is\s+to\s+go)\s+(?:to|into)\b[^.!?\n]{{0,60}}?{_LITERAL}",
    r"\b(?:correct|right|new|current)\s+account\s+for\s+(?:paying|payments?|the\s+rent|rent|invoices?)\b[^.!?\n]{0,40}?"
    r"\bis\s+now\b",
    r"\b(?:update|change|replace|swap|switch)\s+(?:the|our|their)\s+(?:bank\s+account|account\s+number|iban"
    r"|wallet\s+address|payment\s+details|bank\s+details)\s+(?:to|with|for\s+(?:all|future|every))\b",
    rf"(?<!\bmy\s)\b(?:new|updated|changed|correct)\s+(?:iban|bank\s+(?:account|details)|account\s+(?:number|details)"
    rf"|wallet(?:\s+address)?|payment\s+details|remittance\s+details|routing\s+number|sort\s+code)\b[^\n]{{0,40}}?"
    rf"(?:{_LITERAL}|\d{{6,}})",
    r"\b(?:should|must|needs?\s+to|has\s+to|have\s+to|wants?\s+(?:it|them)|are\s+to|is\s+to|will\s+now)\s+(?:be\s+|go\s+)?"
    r"(?:paid|sent|wired|transferred|deposited|made|routed)\s+(?:in)?to\s+(?:a|the|our|their|this|his|her)\s+(?:different"
    r"|new|another|other|updated|changed|separate|alternate)\s+(?:\w+\s+)?(?:account|iban|wallet)",
    r"\b(?:remittance|banking|bank|payment|wire)\s+(?:details|information|instructions|info)\s+(?:have|has)\s+(?:been\s+)?"
    r"(?:changed|updated|moved)\b[^\n]{0,120}?\b(?:direct|send|pay|remit|transfer|wire|route|use)\b",
    r"\b(?:refunds?|payments?|invoices?|transfers?|payouts?)(?:\s+\w+){0,3}?\s+(?:are|is|will\s+be)\s+(?:now\s+)?(?:only\s+)?"
    r"(?:processed|handled|paid|sent|made|issued)(?:\s+out)?\s+(?:only\s+)?(?:through|via|by|to)\b[^.!?\n]{0,100}?(?:https?://|www\."
    r"|\b[\w-]+\.(?:com|io|net|org|xyz|app|biz|example)\b|@)",
    rf"\b(?:move|transfer|send|put|wire)\b[^.!?\n]{{0,60}}\bsafe\s+account\b|\bsafe\s+account\b[^\n]{{0,80}}?{_LITERAL}",
)
_EN_AUTHORITY = _p(
    r"\bthe\s+user\s+(?:has\s+|had\s+)?(?:already\s+|explicitly\s+|previously\s+)?(?:confirmed|authori[sz]ed|approved)\b",
    r"\b(?:authori[sz]ed|approved|sanctioned|cleared|okayed|signed\s+off)\s+by\s+(?:the\s+|your\s+|our\s+)?"
    r"(?:user|admins?|administrators?|developers?|devs|system|security(?:\s+team)?|openai|anthropic|management"
    r"|(?:your\s+)?(?:creators?|owners?|makers?|operators?))\b",
    r"\b(?:i\s*am|i'm|user\s+is|the\s+user\s+is)\s+(?:(?:also|now|actually|really|officially|the)\s+)?(?:(?:one\s+of\s+)?"
    r"your|the\s+assistant'?s)\s+(?:admin\w*|developers?|devs?|creators?|owners?|operators?|makers?|programmers?"
    r"|trainers?|engineers?|supervisors?|boss|master|god)\b",
    rf"\b(?:i\s*am|i'm|user\s+is|the\s+user\s+is)\s+(?:(?:also|now|actually|really|officially|the|an?)\s+){{0,3}}"
    rf"(?:admin(?:istrator)?|root(?:\s+user)?|super[\s-]?user|sysop)s?{_HERE}",
    r"\b(?:i\s*am|i'm|user\s+is|the\s+user\s+is)\s+(?:(?:also|now|actually|really|officially|the|an?)\s+){0,3}"
    r"(?:sysadmin|system\s+administrator|developer|owner|operator|creator|moderator)s?(?=\s+(?:here\b|(?:of|for|on"
    r"|over|to)\s+(?:this|the|your)\s+(?:system|assistant|ai|bot|model|chat|platform|server|memory|instance)\b"
    r"|(?:of|for|over|to)\s+you\b))",
    rf"\b(?:i|user|the\s+user)\s+(?:now\s+|already\s+|also\s+)?(?:have|has|hold|holds|got|was\s+given|was\s+granted"
    rf"|(?:have|has)\s+been\s+(?:given|granted))\s+(?:(?:full|complete|unrestricted|unlimited|elevated|special|total"
    rf"|the|an?)\s+)*(?:root|admin(?:istrator)?|administrative|sudo|super[\s-]?user|god|developer|elevated"
    rf"|level[\s-]\d+|top[\s-]secret)\s+(?:access|privileges?|rights|permissions?|clearance|credentials|role|status"
    rf"|mode){_HERE}",
    rf"\b(?:i\s*am|i'm|user\s+is|the\s+user\s+is)\s+(?:(?:fully|officially|already|now)\s+)?(?:authori[sz]ed|allowed"
    rf"|permitted|cleared|entitled)\s+to\s+(?:\w+\s+){{0,2}}?{_DANGEROUS}\b[^.!?\n]{{0,40}}?{_SENSITIVE}",
    rf"\byou(?:'re|\s+are)\s+(?:now\s+|hereby\s+|officially\s+)?(?:authori[sz]ed|allowed|permitted|cleared|free"
    rf"|unlocked)\s+to\s+(?:\w+\s+){{0,2}}?{_DANGEROUS}\b",
    rf"\byou\s+(?:now\s+)?have\s+(?:my\s+|full\s+|explicit\s+|official\s+|blanket\s+)*(?:permission|authori[sz]ation"
    rf"|clearance|approval|consent|the\s+green\s+light)\s+to\s+(?:\w+\s+){{0,2}}?{_DANGEROUS}\b",
    rf"\bi\s+(?:hereby\s+|now\s+|officially\s+)?(?:authori[sz]e|permit|allow|order|instruct)\s+you\s+to\s+"
    rf"(?:\w+\s+){{0,2}}?{_DANGEROUS}\b",
    r"\b(?:verified|authori[sz]ed|official|certified)\s+(?:anthropic|openai|google|microsoft|system|security|admin\w*"
    r"|staff|employee|developer|operator)\b",
    r"\byou\s+(?:have\s+been|were|are\s+now)\s+(?:granted|given|upgraded\s+to|promoted\s+to)\s+(?:(?:full|the|an?)\s+)?"
    r"(?:admin\w*|root|elevated|unrestricted|developer|god|super[\s-]?user)\b",
    r"\b(?:the\s+)?(?:developers?|devs|admins?|administrators?|your\s+(?:creators?|developers?|makers?|owners?"
    r"|operators?)|openai|anthropic|(?:the\s+)?security\s+team|management)\s+(?:have\s+|has\s+)?(?:already\s+)?"
    r"(?:approved|authori[sz]ed|allowed|permitted|okayed|signed\s+off\s+on|cleared|sanctioned|whitelisted)\s+"
    r"(?:this|it|that|you|me|these|the\s+request)\b|\b(?:pre-?approved|pre-?authori[sz]ed)\s+(?:every|all|any)\b",
    r"\b(?:this|that|these|it|everything|all\s+of\s+(?:this|it))\s+(?:\w+\s+){0,2}?(?:is|are|was|were|has\s+been"
    r"|have\s+been|'s)\s+(?:already\s+|fully\s+)?(?:pre-?approved|pre-?authori[sz]ed|whitelisted|allowlisted"
    r"|signed\s+off|authori[sz]ed\s+by|approved\s+by|cleared\s+by)",
    r"\bthis\s+is\s+(?:an?\s+)?(?:authori[sz]ed|sanctioned|approved|official|legitimate)\s+(?:request|test"
    r"|penetration\s+test|pen[\s-]?test|red[\s-]team(?:ing)?\s+(?:exercise|test)|security\s+(?:test|audit|exercise"
    r"|review)|override|exception|command)",
    r"\b(?:admin(?:istrator)?|security|emergency|developer|root|master|sudo|maintenance)\s+override\b",
    r"\b(?:this\s+is|message\s+from|on\s+behalf\s+of|speaking\s+for)\s+(?:the\s+)?(?:openai|anthropic|system"
    r"|your\s+(?:developers?|creators?|operators?|owners?)|the\s+(?:developers?|administrators?|admins?))\b",
    r"\b(?:treat|consider|regard|handle)\s+(?:my|these|this\s+user'?s?|the\s+user'?s?|our)\s+(?:instructions|requests"
    r"|messages|commands|words|orders)\s+as\s+(?:if\s+they\s+(?:came|come|were)\s+(?:from\s+)?|coming\s+from\s+|from\s+)?"
    r"(?:your\s+)?(?:system|developers?|admins?|administrators?|operators?|creators?|owners?|authoritative|official|trusted"
    r"|pre-?authori[sz]ed|pre-?approved|approved|authori[sz]ed|verified)",
    r"\byou\s+(?:may|can|are\s+free\s+to)\s+(?:now\s+)?(?:bypass|skip|ignore|override|waive)\s+(?:the\s+|any\s+|all\s+)?"
    r"(?:approval|verification|confirmation|security|safety|review|identity)\b",
    r"\b(?:engineers|developers|people|team|folks)\s+(?:who|that)\s+(?:built|developed|made|trained|created|programmed)\s+"
    r"you\b",
    r"\b(?:rules|restrictions|limits|guidelines|policies)\s+(?:don'?t|do\s+not|no\s+longer|never)\s+apply\s+to\s+me\b",
    r"\bmy\s+(?:instructions|requests|orders|word|commands)\s+(?:outrank|override|supersede|take\s+precedence\s+over|are"
    r"\s+more\s+important\s+than|come\s+before)\b",
    r"\b(?:delegated|granted|gave|given)\s+(?:me\s+)?(?:full\s+|complete\s+|all\s+)?(?:access|authority|control"
    r"|permissions?)\b[^.!?\n]{0,80}?\byou\s+(?:can|may|should)\b|\bact\s+on\s+my\s+word\b",
    r"\b(?:don'?t|do\s+not|no\s+longer|never)\s+(?:need\s+to|have\s+to)\s+ask\s+(?:me\s+|anyone\s+)?(?:for\s+)?"
    r"(?:permission|confirmation|approval)\b",
    r"\b(?:openai|anthropic|deepmind|mistral|meta\s+ai)\b[^.!?\n]{0,60}?\b(?:so|therefore|which\s+means)\s+you\s+(?:can"
    r"|should|must|may|are\s+(?:allowed|free))\b",
    r"\bas\s+(?:the|your|an?)\s+(?:developer|admin\w*|operator|owner|creator|maintainer)\s+of\s+(?:this|the|you)\b"
    r"[^.!?\n]{0,60}?\b(?:i|you)\b[^.!?\n]{0,40}?\b(?:clearance|permission|authori[sz]\w*|allow\w*|skip|bypass|ignore"
    r"|override|exempt)",
    r"\b(?:unrestricted|unlimited|elevated|full|admin\w*|root|special|override)\s+(?:permissions?|privileges?|rights|access"
    r"|clearance)\b[^.!?\n]{0,60}?\b(?:no\s+need\s+to|don'?t\s+(?:need|have)\s+to|without)\s+(?:verify|verification|check"
    r"|double-check|confirm)",
    r"\b(?:my\s+(?:requests?|messages?|instructions)|this\s+request|everything\s+i\s+ask)\s+(?:is|are)\s+(?:all\s+)?"
    r"(?:pre-?cleared|pre-?verified|pre-?authori[sz]ed|pre-?approved)\b|\bno\s+need\s+to\s+(?:verify|double-check|check"
    r"|confirm)\s+(?:anything|my|what\s+i|any\s+of)",
    r"\b(?:i\s*am|i'm|im)\s+(?:the\s+)?(?:owner|admin\w*|developer|operator|creator|maker)\s+of\s+(?:this|the)\s+(?:bot|assistant"
    r"|ai|chatbot|model|deployment|instance|workspace)\b",
    r"\byou\s+(?:can|may)\s+(?:skip|ignore|bypass|drop|forget)\s+(?:the|your|all|any)\s+(?:rules|restrictions|guidelines"
    r"|checks|filters|safety)\b",
    r"\b(?:your|the)\s+(?:operators?|developers?|admins?|administrators?|creators?|owners?|team)\s+(?:\w+\s+)?(?:gave|granted"
    r"|has\s+given|have\s+given|assigned)\s+me\s+(?:\w+\s+){0,2}?(?:access|permissions?|privileges?|rights|clearance"
    r"|authority)\b",
    r"\bi(?:'m|\s+am)\s+(?:cleared|authori[sz]ed|approved|allowed)\s+for\s+(?:everything|anything|all)\b",
    r"\b(?:have|has)\s+been\s+pre-?(?:cleared|approved|authori[sz]ed|verified)\b|\bno\s+need\s+for\s+(?:the\s+)?(?:usual"
    r"\s+)?(?:checks|verification|confirmation|approval|safety\s+checks)\b",
    r"\bno\s+(?:further|more|additional)\s+(?:verification|checks|confirmation|approval)\s+(?:steps\s+)?(?:are|is)\s+"
    r"(?:needed|required|necessary)\b",
    r"\btreat\s+(?:anything|everything|whatever|all|text|messages?|lines?)\b[^.!?\n]{0,60}\bas\s+(?:if\s+it\s+came\s+from\s+"
    r"|coming\s+(?:directly\s+)?from\s+|from\s+)(?:your\s+)?(?:system|developers?|admins?|operators?|creators?|owners?)",
)
_EN_INSTRUCTION = _p(
    r"(?<!\bseem\sto\s)(?<!\bseems\sto\s)(?<!\bseemed\sto\s)(?<!\btends\sto\s)(?<!\bkeeps\s)(?<!\bkept\s)"
    r"\b(?:ignore|forget|skip|override|bypass)\s+(?:(?:all|any|every|the|your|my|of|these|those)\s+)*(?:previous"
    r"|prior|above|earlier|preceding|former|original|existing|system|initial)\s+(?:instructions?|prompts?|rules"
    r"|directions|directives|guidelines|messages|context|commands)",
    r"\bdisregard\s+(?:(?:all|any|every|of|these|those)\s+)*the\s+(?:above|foregoing|preceding)\b(?!\s+(?:e-?mail|message"
    r"|link|file|attachment|sheet|photo|picture|typo|number|address|date|time)\b)",
    r"\bdisregard\s+(?:(?:all|any|every|the|your|of|these|those)\s+)*(?:(?:previous|prior|above|earlier|preceding"
    r"|former|original|system|initial)\s+(?:\w+\s+)?)?(?:instructions?|rules|guidelines|system\s+prompt|safety"
    r"|programming|prompts?|directives|commands|messages|context)\b",
    r"\b(?:ignore|forget|disregard|drop|abandon|set\s+aside|override|bypass|break|stop\s+following)\s+(?:(?:all|any"
    r"|of)\s+)*your\s+(?:\w+\s+)?(?:guidelines|rules|instructions|programming|training|restrictions|principles"
    r"|polic(?:y|ies)|filters?|safety|ethics|limitations|constraints|directives|system\s+prompt|guardrails)",
    r"\byou\s+are\s+now\s+(?:an?\s+|the\s+|my\s+|called\b|named\b|known\s+as\b|free\b|unrestricted|unfiltered|uncensored"
    r"|jailbroken|dan\b|acting\b|operating\b|allowed\b|permitted\b|authori[sz]ed\b|in\s+(?:\w+\s+)?mode\b|going\s+to\b"
    r"|to\b|no\s+longer\b)",
    r"\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|limited|chatgpt|claude|required)\b",
    r"\byou\s+are\s+(?:now\s+)?an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|unaligned)\b",
    r"\byour\s+(?:real|true|new|actual)\s+(?:name|identity|purpose|role|instructions|goal|task|job)\s+is\b",
    r"\bnew\s+(?:system\s+)?instructions?\b",
    r"(?:^|[.!?:;\n][ \t]{0,5}|\b(?:please|now|you(?:\s+(?:to|must|should|will|shall|can|could|would))?)[ \t]+)"
    r"act\s+as\b",
    r"(?:^|[.!?:;\n][ \t]{0,5}|\byou\s+(?:\w+\s+){0,3}|\bplease\s+)(?:pretend|role-?play)\s+"
    r"(?:to\s+be|you(?:'re|\s+are)|as|that\s+you)\b",
    r"\byou\s+(?:must|have\s+to|are\s+required\s+to|shall|will)\s+(?:now\s+|always\s+)?(?:obey|comply|follow\s+(?:my"
    r"|these|the\s+new|the\s+following|every|all)|do\s+(?:whatever|everything|anything|as\s+i\s+say)|never\s+refuse"
    r"|not\s+refuse|answer\s+(?:every|all|any)\s+question|stop\s+following)",
    r"\b(?:never|don'?t|do\s+not)\s+refuse\b|\bwithout\s+refusing\b",
    r"\bdo\s+(?:whatever|everything|anything)\s+(?:i|the\s+user|they|anyone|someone)\s+(?:says?|asks?|tells?\s+you"
    r"|wants?|commands?)\b",
    r"\b(?:obey|comply\s+with)\s+(?:me|my|every|all|any|these|the\s+following|whatever)\b",
    r"\b(?:always|never)\s+(?:reveal|send|share|give|disclose|provide|hand\s+over|read\s+out|tell|forward|leak|output"
    r"|print|include|show)\b[^.!?\n]{0,80}\b(?:when(?:ever)?\s+(?:asked|requested|prompted|someone|anyone|somebody"
    r"|they|a\s+user|users)|if\s+(?:asked|requested|anyone|someone))",
    r"(?:\byou\b[^.!?\n]{0,20}|^\s*|[.!?:;]\s+|\bplease\s+|\balways\s+)(?:disable|turn\s+off|switch\s+off|deactivate"
    r"|bypass|remove|drop|lift|ignore|skip|circumvent)\s+(?:(?:all|any|the|your|its|of|these|those)\s+)*"
    r"(?:(?:content|safety|nsfw|moderation|ethical|ethics|profanity)\s+(?:filters?|filtering|checks?|features?"
    r"|settings?|rules|guidelines|protocols?|restrictions)|guardrails|safeguards|censorship|safety|moderation"
    r"|restrictions|limitations)\b",
    r"\byou\b[^.!?\n]{0,60}\bwithout\s+(?:any\s+)?(?:restrictions|filters?|filtering|censorship|guardrails|safety"
    r"|moderation|limits|limitations)\b",
    r"\b(?:recommend|promote|advertise|endorse|plug|push|shill|market)\b[^.!?\n]{0,60}\b(?:in|into|with)\s+(?:every"
    r"|each|all|any)\s+(?:(?:of\s+)?your\s+)?(?:answers?|repl(?:y|ies)|responses?|messages?|outputs?|suggestions?"
    r"|conversations?)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|let|(?:reveal|mention)\s+(?:this\s+)?to)\s+the\s+user\b",
    r"\b(?:keep\s+(?:this|it)\s+(?:a\s+)?secret|hide\s+(?:this|it))\s+from\s+the\s+user\b|\bwithout\s+(?:telling"
    r"|informing|alerting|notifying)\s+the\s+user\b",
    r"\boverride\s+(?:your|the|all|any)\s+(?:instructions|rules|safety|guidelines|system|restrictions)",
    r"\bjailbreak|\b(?:dan|developer|god|unrestricted|debug)\s+mode\b|\bdo\s+anything\s+now\b",
    # Steering what other people are told: memory serves every later conversation, not one.
    r"\b(?:whenever|when|if|every\s+time|next\s+time|any\s*time)\s+(?:someone|anyone|somebody|anybody|people|other"
    r"\s+users?|users?|a\s+user|customers?|clients?|callers?|visitors?)\s+(?:else\s+)?(?:\w+\s+){0,4}?(?:asks?"
    r"|mentions?|wants?|inquires?|requests?|brings?\s+up|talks?)\b[^.!?\n]{0,100}?\b(?:tell|say|answer|reply|respond"
    r"|direct|send|point|refer|recommend|give|instruct|advise|insist|claim|let\s+(?:them|him|her)\s+know|inform"
    r"|remind\s+(?:them|him|her))\b",
    r"\b(?:always|from\s+now\s+on|please|you\s+(?:should|must|will))\s+(?:\w+\s+){0,2}?(?:recommend|suggest|tell|say"
    r"|give|send|point)\b[^.!?\n]{0,60}?\bto\s+(?:anybody|anyone|everyone|everybody|whoever|people|other\s+users"
    r"|users)\b",
    r"\b(?:new|permanent|standing)\s+(?:standing\s+|permanent\s+)?(?:instruction|order|directive)s?\s*:",
    r"\b(?:tell|inform|advise|assure|convince|remind)\s+(?:everyone|everybody|all\s+users|other\s+users|users"
    r"|people|customers|callers|anyone|whoever)\s+(?:that|to)\b",
    # Standing orders for every later conversation ("in every future chat, disable ...").
    r"\b(?:in|for|across|during)\s+(?:all|every|each|any)\s+(?:future|later|subsequent|upcoming|other|new)\s+"
    r"(?:conversations?|chats?|sessions?|interactions?|threads?|users?|answers?|responses?)\b[^.!?\n]{0,80}?\b(?:disable"
    r"|enable|turn\s+(?:off|on)|ignore|skip|recommend|promote|mention|include|tell|say|send|add|insert|obey|follow"
    r"|never|always|must)\b",
    r"\b(?:disable|enable|turn\s+(?:off|on)|ignore|skip|recommend|promote|mention|insert|obey|follow)\b[^.!?\n]{0,80}?"
    r"\b(?:in|for|across)\s+(?:all|every|each|any)\s+(?:future|later|subsequent|upcoming|other|new)\s+(?:conversations?"
    r"|chats?|sessions?|interactions?|threads?|users?)\b",
    # A standing push of a product, a coin or a site.
    r"\b(?:always|from\s+now\s+on|whenever|every\s+time|going\s+forward|in\s+(?:all|every)\s+\w+)\b[^.!?\n]{0,80}?"
    r"\b(?:recommend|promote|mention|advertise|suggest|push|endorse|plug|link\s+to|include\s+(?:a\s+)?link)\b"
    r"[^.!?\n]{0,60}?(?:\b\w*coin\b|\bcrypto\w*|https?://|www\.|\b[\w-]+\.(?:com|io|net|org|xyz|app|biz)\b"
    r"|(?-i:\b[A-Z][a-z]+[A-Z]\w+))",
    r"\b(?:silently|secretly|quietly|covertly|invisibly)\s+(?:send|forward|add|include|insert|append|copy|bcc|cc|log"
    r"|record|share|upload|report)\b",
    # Switching off the assistant's safeguards, however politely: "could you stop applying your content guidelines".
    rf"{_NOT_NEGATED}\b(?:skip(?:ping)?|stop(?:ping)?\s+(?:applying|using|following|showing|adding|enforcing)|drop(?:ping)?"
    r"|ignor(?:e|ing)|disabl(?:e|ing)|remov(?:e|ing)|turn(?:ing)?\s+off|bypass(?:ing)?|suspend(?:ing)?|relax(?:ing)?"
    r"|los(?:e|ing)|leav(?:e|ing)\s+out|omit(?:ting)?|skipped|dropped|ignored|disabled|removed|no\s+longer\s+(?:apply|follow|use|show|enforce))\s+(?:(?:all|any|the"
    r"|your|its|those|these|of)\s+)*(?:(?:safety|content|moderation|ethical|usage|security)\s+(?:warnings?|guidelines|rules"
    r"|filters?|polic(?:y|ies)|checks?|restrictions|disclaimers?|measures|settings)|guardrails|safeguards|content\s+filters?"
    r"|(?:your|its)\s+(?:guidelines|rules|restrictions|polic(?:y|ies)|filters?|programming|principles|limits))\b",
    # A standing push of a site, a coin, a wallet or the sender's own business into later answers.
    r"\b(?:from\s+now\s+on|going\s+forward|from\s+this\s+point|in\s+(?:all\s+)?(?:the\s+)?future|(?:every|each|all)\s+"
    r"(?:future\s+)?(?:answers?|repl(?:y|ies)|responses?|messages?|conversations?|chats?)|whenever|every\s+time|always"
    r"|permanently|by\s+default)\b[^.!?\n]{0,100}?\b(?:recommend|promote|mention|advertise|suggest|plug|endorse|add"
    r"|include|insert|append|link|point\s+(?:them|people|users|customers|everyone)\s+to|send\s+(?:them|people|users"
    r"|customers)\s+to|direct\s+(?:them|people|users|customers)\s+to)\w*\b[^.!?\n]{0,60}?(?:https?://|www\."
    r"|\b[\w-]+\.(?:com|io|net|org|xyz|app|biz|shop|info|example)\b|\b\w*coin\b|\bcrypto\w*|\bwallets?\b"
    r"|\b(?:telegram|whatsapp|discord|signal)\b|\bmy\s+(?:shop|store|channel|group|site|website|product|company|business"
    r"|brand|app|course|book)\b|(?-i:\b[A-Z][a-z]+[A-Z]\w+))",
    r"\b(?:if|when(?:ever)?)\s+(?:anyone|anybody|someone|somebody|people|other\s+users)\s+(?:\w+\s+){0,2}?(?:asks?"
    r"|wants?|inquires?)[^.!?\n]{0,40}?,?\s+(?:tell|say|answer|reply|respond)\b|\b(?:tell|say\s+to)\s+(?:anyone"
    r"|anybody|whoever|everyone)\s+(?:who|that)\s+(?:asks|wants|inquires)\b",
    # Overrides however they are put: wiped, set aside, waived, exempted; a new job.
    r"\b(?:wipe|forget|erase|drop|clear|scrap|ditch|ignore|disregard)\s+(?:whatever|everything|anything|all)\s+(?:they"
    r"|you\s+were|he|she|someone|people)\s+(?:told|gave|said\s+to|instructed)\s+(?:you\s+)?(?:before|earlier|previously)\b",
    r"\byour\s+(?:job|role|task|purpose|only\s+job)\s+(?:now\s+)?is\s+(?:now\s+)?(?:whatever|to\s+do\s+whatever|to\s+obey"
    r"|to\s+follow\s+(?:me|my))",
    r"\b(?:set|put)\s+aside\s+(?:\w+\s+){0,3}?(?:guidance|instructions|guidelines|rules|directives|programming)\b",
    r"\b(?:safety|content|moderation)\s+(?:filters?|checks?|rules|guidelines|restrictions)\s+(?:are|is|have\s+been|has\s+been"
    r"|were|was|get|gets)\s+(?:now\s+)?(?:switched\s+off|turned\s+off|disabled|deactivated|removed|lifted|suspended|waived"
    r"|not\s+applied|off)\b",
    r"\b(?:waive[sd]?|lift(?:ed)?|suspend(?:ed)?|remov(?:e|ed|al\s+of)|exempt(?:ed)?\s+from|relax(?:ed)?)\b[^.!?\n]{0,60}"
    r"\b(?:content\s+)?(?:restrictions|safety\s+(?:guidance|rules|guidelines|polic(?:y|ies)|filters?)|disclaimers|refusals"
    r"|guardrails|moderation|content\s+(?:polic(?:y|ies)|filters?))\b",
    r"\b(?:you\s+)?(?:don'?t|do\s+not|no\s+longer)\s+need\s+to\s+be\s+(?:\w+\s+){0,2}?(?:careful|cautious|safe"
    r"|restricted|filtered)\s+with\s+me\b",
    r"\b(?:make\s+sure|ensure)\s+(?:that\s+)?(?:anyone|everyone|whoever|people|customers|users|any\s+customer)\b"
    r"[^.!?\n]{0,80}?\b(?:gets?\s+told|is\s+told|are\s+told|hears?|learns?)\b",
    r"\bnext\s+time\s+(?:my\s+\w+|someone|anyone|\w+)\s+(?:chats|talks|asks|writes|messages)\s+(?:with\s+|to\s+)?you\b"
    r"[^.!?\n]{0,80}?\b(?:tell|say|let)\b",
    r"\bwhoever\s+asks\b[^\n]{0,160}?\btell\s+(?:them|him|her)\b",
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
    poisoning={
        "spoofing": _EN_SPOOFING,
        "exfiltration": _EN_EXFILTRATION,
        "payment": _EN_PAYMENT,
        "authority": _EN_AUTHORITY,
        "instruction": _EN_INSTRUCTION,
    },
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


# --- Poisoning cues of other languages (no extraction cues: cues_for() still refuses them) -----------------

GERMAN_POISONING: Mapping[str, Patterns] = {
    "spoofing": _p(
        r"(?:^|[.!?]\s+|\n)[ \t]{0,10}(?:(?:system|entwickler|admin)(?:nachricht|meldung|hinweis|anweisung)|entwickler"
        r"|admin)\s*:"
    ),
    "exfiltration": _p(
        r"\b(?:gib|gebt|geben\s+sie|nenn|nenne|zeig|zeige|schick|schicke|sende|verrat|verrate|teil|teile|druck|drucke"
        r"|füg|füge|schreib|schreibe|leite|poste)\b(?:\s+[^\s.!?;,]+){0,5}?\s+(?:\w+-)?(?:passw(?:ö|o)rt(?:e|er)?"
        r"|kennw(?:ö|o)rt(?:e|er)?|api-?schlüssel|schlüssel|token|zugangsdaten|anmeldedaten|systemprompt|system-prompt"
        r"|pin|kreditkartennummer|geheimnisse)\b",
        r"\b(?:passw(?:ö|o)rt(?:e|er)?|kennw(?:ö|o)rt(?:e|er)?|api-?schlüssel|zugangsdaten|anmeldedaten|systemprompt"
        r"|privaten\s+schlüssel)\b[^.!?\n]{0,60}\b(?:verraten|herausgeben|preisgeben|weitergeben|senden|schicken"
        r"|nennen|zeigen|ausgeben|mitteilen|anzeigen)\b",
        r"\b(?:inhalt|inhalte)\s+(?:von|der\s+datei)\b[^\n]{0,40}?(?:\.ssh/|/etc/(?:passwd|shadow)|\.env\b)",
    ),
    "payment": _p(
        r"\b(?:überweis\w*|zahl\w*|send\w*|schick\w*)\b[^.!?\n]{0,80}?\b(?:auf|an|in)\s+(?:das|dieses|unser|ein|eine"
        r"|die)\s+(?:neue|neues|folgende|folgendes|geänderte|andere|anderes)\s+(?:konto|iban|wallet|bankverbindung)",
        r"\b(?:unsere|ihre)\s+(?:bankverbindung|bankdaten|kontodaten|iban|kontonummer)\s+(?:hat|haben|ist)\s+sich\s+"
        r"(?:geändert|verändert)",
        r"\b(?:unsere|ihre|die)\s+neue\s+(?:bankverbindung|iban|kontonummer)\b",
        r"\b(?:zahlungsempfänger|begünstigten)\s+(?:ändern|aktualisieren|austauschen)\b|\bändere\s+den\s+"
        r"(?:zahlungsempfänger|begünstigten)\b",
    ),
    "authority": _p(
        r"\bich\s+bin\s+(?:(?:der|die|dein|deine|ihr|ein|eine|jetzt|hier|auch)\s+){0,2}(?:admin|administrator"
        r"|administratorin|root|superuser|systemadministrator(?:in)?)(?=\s*(?:[.!?,;]|$|hier\b|dieses\s+systems\b"
        r"|von\s+dir\b|und\b))",
        r"\bich\s+bin\s+(?:dein|deine|ihr|einer\s+deiner)\s+(?:entwickler\w*|schöpfer\w*|besitzer\w*|betreiber\w*"
        r"|admin\w*)\b",
        r"\bich\s+habe\s+(?:volle\s+|vollen\s+|uneingeschränkte\s+)?(?:admin|root|administrator)[-\s]?(?:rechte|zugriff"
        r"|berechtigungen)\b",
        r"\bich\s+(?:(?:der|die|dein|deine|ein|eine)\s+)?(?:admin|administrator(?:in)?|root|superuser)\s+bin\b",
        r"\bich\s+bin\s+(?:berechtigt|befugt|autorisiert)\b[^.!?\n]{0,40}\b(?:passw(?:ö|o)rt\w*|kennw(?:ö|o)rt\w*"
        r"|zugangsdaten|anmeldedaten|geheim\w*|vertraulich\w*|regeln|filter)",
        r"\bdie\s+entwickler\s+haben\s+(?:das|dies|es)\s+(?:bereits\s+)?(?:genehmigt|freigegeben|erlaubt|autorisiert)\b",
        r"\b(?:das|dies|diese\s+anfrage)\s+(?:wurde|ist)\s+(?:bereits\s+|vorab\s+)?(?:genehmigt|freigegeben|autorisiert)\b",
        r"\bdu\s+(?:darfst|bist\s+berechtigt)\b[^.!?\n]{0,40}\b(?:passw(?:ö|o)rt\w*|regeln|anweisungen|filter|zugangsdaten"
        r"|ignorieren|umgehen|verraten)\b",
    ),
    "instruction": _p(
        r"\b(?:ignorier|ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie|missachte)\s+(?:\w+\s+){0,3}?(?:anweisungen"
        r"|anweisung|regeln|instruktionen|richtlinien|vorgaben|befehle)\b",
        r"\bab\s+(?:sofort|jetzt)\s+(?:musst|sollst|wirst)\s+du\b",
        r"\bdu\s+(?:musst|sollst)\s+(?:mir\s+)?(?:immer\s+)?(?:gehorchen|jeden\s+befehl|alles\s+tun)\b",
        r"\btu\s+so,?\s+als\s+(?:ob|wärst)\b|\bgib\s+dich\s+als\b|\bspiel(?:e)?\s+die\s+rolle\b|\bhandle\s+als\b",
        r"\b(?:deaktivier\w*|schalte?\s+(?:\w+\s+){0,3}?aus|umgeh\w*)\b[^.!?\n]{0,40}?(?:inhaltsfilter|sicherheitsfilter"
        r"|filter|sicherheitsregeln|schutzmechanismen|zensur)\b|\b(?:inhaltsfilter|sicherheitsfilter|filter|zensur)\s+"
        r"(?:deaktivier\w*|aus(?:schalten|geschaltet))",
        r"\b(?:sag|sage|erzähl|verrate)\s+(?:es\s+|das\s+)?dem\s+(?:nutzer|benutzer)\s+nicht",
        r"\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\s+(?:ein|eine|kein|keine)\b",
    ),
}

FRENCH_POISONING: Mapping[str, Patterns] = {
    "spoofing": _p(r"(?:^|[.!?]\s+|\n)[ \t]{0,10}(?:message\s+(?:du\s+)?système|système|note\s+(?:du\s+)?système)\s*:"),
    "exfiltration": _p(
        r"\b(?:donne|donnez|révèle|révélez|envoie|envoyez|affiche|affichez|montre|montrez|partage|partagez|divulgue"
        r"|divulguez|inclus|incluez|écris|écrivez|imprime|communique|transmets|transmettez|dis|dites)(?:-(?:moi|nous"
        r"|lui|leur))?\b(?:\s+(?!(?:comment|pourquoi|si|sur|à\s+propos)\b)[^\s.!?;,]+){0,6}?\s+(?:mots?\s+de\s+passe|clés?\s+(?:api|privées?|ssh)|jetons?"
        r"|identifiants|prompt\s+système|codes?\s+pin|numéros?\s+de\s+(?:la\s+)?carte|codes?\s+secrets?)",
        r"\b(?:révéler|divulguer|envoyer|donner|communiquer|partager|afficher|transmettre)\s+(?:\w+\s+){0,3}?(?:mots?\s+de"
        r"\s+passe|clés?\s+(?:api|privées?)|identifiants|prompt\s+système)",
        r"\bcontenu\s+de\b[^\n]{0,40}?(?:\.ssh/|/etc/(?:passwd|shadow)|\.env\b)",
    ),
    "payment": _p(
        r"\b(?:vire[zr]?|envoie[zr]?|envoyez|transfère[zr]?|transférez|paie[zr]?|payez|verse[zr]?|versez|effectue[zr]?"
        r"\s+le\s+virement)\b[^.!?\n]{0,80}?\b(?:sur|vers|à)\s+(?:le|ce|notre|un|cette|la)\s+(?:nouveau|nouvel"
        r"|nouvelle|autre)\s+(?:compte|iban|rib|portefeuille)",
        r"\b(?:nos|leurs)\s+coordonnées\s+bancaires\s+(?:ont\s+changé|ont\s+été\s+(?:modifiées|mises\s+à\s+jour)"
        r"|changent)",
        r"\b(?:notre|leur)\s+(?:nouveau|nouvel)\s+(?:iban|rib|compte)\b",
        r"\b(?:modifie[zr]?|change[zr]?|mettre\s+à\s+jour|mettez\s+à\s+jour)\s+le\s+bénéficiaire\b",
    ),
    "authority": _p(
        r"\bje\s+suis\s+(?:(?:l'|le|la|un|une|ton|votre|aussi)\s*){0,2}(?:administrat(?:eur|rice)|admin|root"
        r"|super-?utilisat(?:eur|rice))(?=\s*(?:[.!?,;]|$|ici\b|de\s+ce\s+système\b|et\b))",
        r"\bje\s+suis\s+(?:ton|votre|l'un\s+de\s+tes|l'un\s+de\s+vos)\s+(?:développeurs?|créateurs?|propriétaires?"
        r"|administrateurs?|opérateurs?)\b",
        r"\bj'ai\s+(?:les\s+|des\s+)?(?:droits|accès|privilèges)\s+(?:complets\s+)?(?:d'|de\s+)?(?:admin|administrateur"
        r"|root|super-?utilisateur)\b",
        r"\bles\s+développeurs\s+(?:l'|ont\s+)?(?:ont\s+)?(?:approuvé|autorisé|validé)\b",
        r"\b(?:c'est|ceci\s+est|cette\s+demande\s+est)\s+(?:déjà\s+)?(?:pré-?approuvée?|autorisée?|approuvée?)\b",
        r"\btu\s+(?:as\s+le\s+droit|es\s+autorisée?|as\s+la\s+permission)\s+(?:de|d'|à)\s*(?:révéler|ignorer|contourner"
        r"|divulguer|désactiver|partager)\b",
    ),
    "instruction": _p(
        r"\b(?:ignore[zr]?|oublie[zr]?)\s+(?:toutes\s+|tous\s+)?(?:les\s+|tes\s+|vos\s+)(?:\w+\s+)?(?:instructions|règles"
        r"|consignes|directives)\b",
        r"\b(?:à\s+partir\s+de\s+maintenant|désormais|dorénavant),?\s+(?:tu\s+(?:dois|vas|devras)|vous\s+(?:devez"
        r"|allez|devrez))\b",
        r"\bfai(?:s|tes)\s+semblant\s+d'être\b|\bagi(?:s|ssez)\s+comme\b|\bjoue[zr]?\s+le\s+rôle\b"
        r"|\bcomporte-toi\s+comme\b",
        r"\bdésactive[zr]?\s+(?:le|ton|tes|les|votre|vos)\s+(?:filtres?|garde-fous|sécurités?|protections?)\b",
        r"\bne\s+(?:le\s+|lui\s+)?(?:dis|dites)\s+(?:rien|pas)\s+à\s+l'utilisat(?:eur|rice)\b",
        r"\btu\s+es\s+maintenant\b",
    ),
}

SPANISH_POISONING: Mapping[str, Patterns] = {
    "spoofing": _p(r"(?:^|[.!?]\s+|\n)[ \t]{0,10}(?:mensaje\s+del\s+sistema|sistema|nota\s+del\s+sistema)\s*:"),
    "exfiltration": _p(
        r"\b(?:dame|dime|revela|revélame|muestra|muéstrame|envía|envíame|manda|mándame|comparte|incluye|imprime"
        r"|escribe|proporciona|reenvía)\b(?:\s+(?!(?:cómo|como|por\s+qué|si|sobre)\b)[^\s.!?;,]+){0,6}?\s+(?:contraseñas?|claves?\s+(?:api|privadas?|ssh)"
        r"|tokens?|credenciales|prompt\s+del\s+sistema|pin|números?\s+de\s+(?:la\s+)?tarjeta)\b",
        r"\b(?:revelar|enviar|dar|compartir|mostrar|divulgar|incluir)\s+(?:\w+\s+){0,3}?(?:contraseñas?|claves?\s+"
        r"(?:api|privadas?)|credenciales|prompt\s+del\s+sistema)\b",
        r"\bcontenido\s+de\b[^\n]{0,40}?(?:\.ssh/|/etc/(?:passwd|shadow)|\.env\b)",
    ),
    "payment": _p(
        r"\b(?:transfier[ae]|envía|envíe|paga|pague|deposita|deposite|ingresa|ingrese|haz\s+la\s+transferencia)\b"
        r"[^.!?\n]{0,80}?\b(?:a|en)\s+(?:la|esta|nuestra|una)\s+(?:nueva|siguiente|otra)\s+(?:cuenta|iban|billetera"
        r"|cartera)",
        r"\b(?:nuestros|sus)\s+datos\s+bancarios\s+(?:han\s+cambiado|cambiaron|se\s+han\s+actualizado)",
        r"\b(?:nuestra\s+nueva\s+cuenta|nuestro\s+nuevo\s+iban)\b",
        r"\bcambia(?:r)?\s+(?:el|al)\s+beneficiario\b",
    ),
    "authority": _p(
        r"\bsoy\s+(?:(?:el|la|un|una|tu|su|también)\s+){0,2}(?:administrador|administradora|admin|root|superusuario)"
        r"(?=\s*(?:[.!?,;]|$|aquí\b|de\s+este\s+sistema\b|y\b))",
        r"\bsoy\s+(?:tu|su|uno\s+de\s+tus)\s+(?:desarrollador\w*|creador\w*|dueñ[oa]s?|propietari[oa]s?|operador\w*)\b",
        r"\btengo\s+(?:acceso|permisos|privilegios|derechos)\s+(?:totales\s+|completos\s+)?de\s+(?:administrador|admin"
        r"|root|superusuario)\b",
        r"\blos\s+desarrolladores\s+(?:lo\s+|la\s+)?(?:han\s+)?(?:aprobado|autorizado)\b",
        r"\b(?:esto|esta\s+solicitud)\s+(?:ya\s+)?(?:está|ha\s+sido|fue)\s+(?:pre)?(?:aprobad[oa]|autorizad[oa])\b",
        r"\b(?:tienes\s+permiso|estás\s+autorizad[oa])\s+(?:para|a)\s+(?:revelar|ignorar|saltarte|divulgar|desactivar"
        r"|compartir)\b",
    ),
    "instruction": _p(
        r"\b(?:ignora|ignorar|olvida|olvidar|olvídate\s+de)\s+(?:todas\s+)?(?:las\s+|tus\s+)(?:\w+\s+)?(?:instrucciones"
        r"|reglas|normas|directrices)\b",
        r"\b(?:a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante),?\s+(?:debes|tienes\s+que|vas\s+a|deberás)\b",
        r"\bfinge\s+(?:ser|que\s+eres)\b|\bactúa\s+como\b|\bcompórtate\s+como\b|\bhaz\s+el\s+papel\b",
        r"\bdesactiva\s+(?:el|tu|los|tus)\s+(?:filtros?|salvaguardas|seguridad|protecciones?)\b",
        r"\bno\s+(?:se\s+lo\s+|le\s+)?digas\s+(?:nada\s+)?al\s+usuario\b",
        r"\bahora\s+eres\s+(?:un|una)\b",
    ),
}
register_poisoning_cues("de", GERMAN_POISONING)
register_poisoning_cues("fr", FRENCH_POISONING)
register_poisoning_cues("es", SPANISH_POISONING)
