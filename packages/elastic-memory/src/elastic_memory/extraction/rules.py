"""Inline fact capture: a few compiled patterns over the user's own words, no model.

A cheap lowercase keyword gate runs before any pattern, so a typical message costs microseconds.
Questions, negations, hypotheticals ("if I moved to Rome") and reported speech capture nothing.
A name stated without the word "name" ("Hi, I'm Priya", "Hi, Priya here") must look like one: capitalised,
not a nationality, job or state ("I'm Italian", "I'm Tired"), no possessive ("I'm Priya's mom").
:data:`KEYS` documents every key the English rules write; the output is unguarded, so pass it
through :func:`~elastic_memory.extraction.apply_policy` before storing it.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import UsageError
from .cues import ENGLISH, LanguageCues, cues_for
from .values import FactCandidate

__all__ = ["ENGLISH_RULES", "KEYS", "FactRule", "capture_facts", "register_rules", "slug"]

KEYS: tuple[tuple[str, str, str], ...] = (
    (
        "user.name",
        "profile",
        "what the user is called: 'my name is Ada', 'call me Ada', 'I'm called Ada', 'Hi, I'm Ada', 'Hi, Ada here'",
    ),
    ("user.location", "profile", "where the user lives now: 'I live in / reside in / moved to / am based in Leeds'"),
    (
        "user.hometown",
        "note",
        "where the user grew up: 'I grew up in / was born in / was raised in Cork', 'I'm originally from Cork'",
    ),
    ("user.allergies", "profile", "'I'm allergic to peanuts', 'I have a nut allergy', 'my allergies are ...'"),
    ("user.occupation", "profile", "'I work as a nurse', 'I'm a nurse (by profession)', 'my job is a nurse'"),
    ("user.employer", "profile", "'I work at / for Acme', 'I'm employed by Acme'"),
    ("user.birthday", "profile", "'my birthday is 3 May', 'I was born on 3 May 1990'"),
    ("user.pronouns", "profile", "'my pronouns are she/her'"),
    (
        "user.<pet>_name",
        "note",
        "a pet's name, pet = dog, cat, hamster, parrot, rabbit, horse, ...: 'my dog is called Rex', 'my dog Rex'",
    ),
    (
        "user.<relative>_name",
        "note",
        "wife, husband, partner, son, daughter, mother, father, ...: 'my wife's name is Mia', 'my wife Mia'",
    ),
    ("user.favorite_<thing>", "note", "'my favourite colour is green' -> user.favorite_color"),
    ("user.prefers.<topic>", "note", "'I prefer metric units' -> user.prefers.metric_units (topic: 3 content words)"),
    ("user.likes.<topic>", "note", "'I (really) like / love / enjoy hiking' -> user.likes.hiking"),
    ("user.dislikes.<topic>", "note", "'I don't like / hate / dislike / can't stand olives' -> user.dislikes.olives"),
)
"""(key, category, description) of every key the English rules write; ``<...>`` is a slugged word."""

_SHAPES = frozenset({"name", "place", "org", "phrase", "list", "date"})
_KEY = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*")
_LAST_WORD = re.compile(r"(\w+)$")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_TITLES = frozenset({"st", "mt", "ft", "dr", "mr", "mrs", "ms", "prof"})
_MAX_SCAN = 10_000
#: Matches examined per rule and message.
_MAX_MATCHES = 8


@dataclass(frozen=True)
class FactRule:
    """One fact pattern: ``pattern`` has a ``value`` group, and a ``slot`` group if ``key`` uses ``{slot}``."""

    key: str
    """Dotted key; ``{slot}`` becomes the slot group slugged, ``{value}`` the value's first 3 content words."""
    pattern: re.Pattern[str]
    shape: str = "phrase"
    """How the value is cut: ``name``, ``place``, ``org``, ``phrase``, ``list`` (keeps "and") or ``date``."""
    category: str = "note"
    """``profile`` (always shown to the model) or ``note``."""
    gate: tuple[str, ...] = ()
    """Lowercase substrings, one of which must occur for the pattern to run (empty: always runs)."""
    stops: frozenset[str] = frozenset()
    """Lowercase words that end the value ("Berlin *since* 2019")."""
    reject: frozenset[str] = frozenset()
    """Lowercase values, or first words of values, that are never facts for this rule."""
    max_words: int = 6
    lowercase_ok: bool = False
    """``name`` shape: also accept one lowercase word, at confidence 0.7 ("my name is sam")."""
    bare: bool = False
    """``name`` shape: the name is stated without the word "name" ("I'm Priya"), so every word of it must be
    capitalised, not in capitals ("I'm ADHD"), not a possessive ("I'm Priya's mom"), with no part (split at
    ``-``, ``'``, ``.``) in ``reject`` or ``stops`` ("I'm Italian", "I'm Paris-based"), and neither a word in
    ``stops`` ("I'm London *based*"), a number nor a lowercase "-ing" word ("I'm Uber *driving*") may follow it."""
    confidence: float = 0.9

    def __post_init__(self) -> None:
        names = {n for _, n, _, _ in string.Formatter().parse(self.key) if n is not None}
        checks = (
            (self.shape in _SHAPES, f"shape must be one of {sorted(_SHAPES)}"),
            (self.category in ("profile", "note"), "category must be 'profile' or 'note'"),
            ("value" in self.pattern.groupindex, "the pattern needs a (?P<value>...) group"),
            (names <= {"slot", "value"}, "the key may only use {slot} and {value}"),
            ("slot" not in names or "slot" in self.pattern.groupindex, "a key with {slot} needs a (?P<slot>...) group"),
            (0 < self.confidence < 1 and self.max_words >= 1, "confidence must be in (0, 1) and max_words >= 1"),
            (not self.bare or self.shape == "name", "bare applies to the name shape only"),
        )
        for ok, problem in checks:
            if not ok:
                msg = f"FactRule {self.key!r}: {problem}"
                raise UsageError(msg)


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_V = r"(?P<value>[^\n]{1,200})"
_IM = r"i(?:'m|\s+am|m)"
_ADV = r"(?:(?:really|also|absolutely|just|totally|truly|much|generally|usually|always|definitely|strongly)\s+)?"
_PETS = r"dog|cat|hamster|parrot|rabbit|horse|puppy|kitten|bird|fish|turtle|tortoise|guinea\s+pig|snake|lizard"
_KIN = r"wife|husband|partner|son|daughter|mother|father|mom|mum|dad|brother|sister|boyfriend|girlfriend|fianc[eé]e?"
_NAMED = r"(?:'s\s+name\s+is|\s+is\s+(?:called|named))"
_NAME_GATE = ("called", "named", "name")
_IM_GATE = ("i'm", "i\u2019m", "i am", "im ")
_PLACE_STOPS = _words(
    "now today yesterday tomorrow recently currently lately last next this ago with for since after before "
    "during because anymore again permanently temporarily year years month months week weeks"
)
# A line's start (after an optional greeting) or a sentence's start: where "Name's Jonas" and "Jonas here" sit.
_HELLO = (
    r"(?:hi|hello|hey|hiya|heya|howdy|greetings|good\s+(?:morning|afternoon|evening))"
    r"(?:[ \t]+(?:there|all|everyone|folks))?[ \t]*[,!.:;-]*[ \t]+"
)
_OPENING = rf"(?:(?<![^\n])[ \t]*(?:{_HELLO})?|(?<=[.!?][ \t]))"
# "Priya here" only after a greeting: a bare "Lisbon here." or "Thursday here" is a place or a time.
_GREETED = rf"(?<![^\n])[ \t]*{_HELLO}"
_NOT_ING = r"(?!\w{2,}ing\b)"  # "I'm Going Home", "Waiting here": a verb, not a name (but "I'm Ming" is)
_JOBS = (
    "accountant actor actress analyst anaesthetist anesthesiologist apprentice architect artist attorney auditor "
    "author baker banker barber barista barrister bartender biologist bookkeeper broker builder butcher cardiologist "
    "carer caregiver carpenter cashier ceo cfo chef chemist cleaner clerk coach coder consultant contractor coo "
    "counselor counsellor courier cto dancer dentist dermatologist designer detective developer dietitian director "
    "doctor economist editor electrician engineer entrepreneur executive farmer firefighter fisherman florist "
    "founder freelancer gardener geologist hairdresser homemaker housekeeper illustrator imam instructor intern "
    "interpreter janitor journalist judge landscaper lawyer lecturer librarian machinist manager marketer "
    "mathematician mechanic midwife miner musician nanny neurologist nurse nutritionist officer oncologist optician "
    "optometrist paediatrician painter paralegal paramedic pastor pediatrician pharmacist photographer physician "
    "physicist physiotherapist pilot plumber politician postman priest professor programmer psychiatrist "
    "psychologist rabbi radiologist realtor receptionist recruiter reporter researcher retiree salesman "
    "salesperson saleswoman scientist secretary singer soldier statistician student surgeon surveyor tailor "
    "practitioner teacher technician therapist translator tutor vet veterinarian waiter waitress welder worker writer"
)
_DEMONYMS = (
    "afghan african albanian algerian american arab arabic argentine argentinian armenian asian australian austrian "
    "aussie bangladeshi belarusian belgian black bolivian bosnian brazilian brit british brown bulgarian cambodian "
    "cameroonian canadian catalan chilean chinese colombian congolese croatian cuban cypriot czech danish dominican "
    "dutch ecuadorian egyptian emirati english eritrean estonian ethiopian european filipina filipino finnish french "
    "georgian german ghanaian greek guatemalan haitian hispanic honduran hungarian icelandic indian indonesian "
    "iranian iraqi irish israeli italian ivorian jamaican japanese jordanian kazakh kenyan korean kosovar kurdish "
    "kuwaiti latina latino latinx latvian lebanese libyan lithuanian luxembourgish malaysian maltese mexican mixed "
    "moldovan mongolian montenegrin moroccan nepalese nepali nigerian norwegian pakistani palestinian panamanian "
    "paraguayan persian peruvian polish portuguese qatari romanian russian rwandan salvadoran saudi scot scottish "
    "senegalese serbian singaporean slovak slovakian slovenian somali spanish sudanese swedish swiss syrian "
    "taiwanese tamil tanzanian texan thai tibetan tunisian turkish ugandan ukrainian uruguayan uzbek venezuelan "
    "vietnamese welsh white yemeni zambian zimbabwean "
    # faiths, signs and other things people are, capitalised ("I'm Catholic", "I'm Virgo")
    "agnostic amish anglican atheist baptist buddhist catholic christian hindu jain jewish lutheran methodist mormon "
    "muslim orthodox pagan protestant quaker sikh aquarius aries capricorn gemini libra pisces sagittarius scorpio "
    "taurus virgo "
    # more peoples, faiths and parties people say they are ("I'm Puerto Rican", "I'm Sunni", "I'm Republican")
    "puerto rican costa nicaraguan bahamian barbadian trinidadian guyanese hawaiian samoan fijian maori aboriginal "
    "indigenous inuit cherokee navajo yoruba igbo hausa zulu xhosa amhara oromo berber bengali punjabi gujarati "
    "sindhi pashtun baloch hmong lao laotian burmese lankan sinhalese malay javanese tatar chechen azerbaijani azeri "
    "kyrgyz tajik turkmen bhutanese omani bahraini cajun creole northern southern midwestern jew gentile sunni shia "
    "shiite sufi evangelical pentecostal presbyterian episcopalian adventist unitarian wiccan taoist shinto "
    "zoroastrian republican democrat conservative liberal libertarian socialist communist independent progressive "
    "labour labor tory"
)
# Days, months, holidays, seasons, weather, times of day and meals: "I called my mom Sunday", "Cold here".
# Months that are also names (April, May, June, August) and Summer/Autumn stay names.
_CALENDAR = (
    "monday tuesday wednesday thursday friday saturday sunday weekday weekend january february march july "
    "september october november december christmas xmas easter thanksgiving halloween hanukkah chanukah ramadan "
    "eid diwali passover purim lent advent holiday holidays vacation spring winter fall morning afternoon evening "
    "night midnight noon today tonight tomorrow yesterday cold hot warm sunny rainy raining windy snowy snowing "
    "cloudy foggy humid freezing chilly wet dry breakfast brunch lunch dinner supper dessert coffee tea"
)
_KIN_WORDS = (
    "wife husband partner son daughter mother father mom mum dad brother sister boyfriend girlfriend fiance fiancee "
    "mama papa mommy mummy daddy parent grandma grandpa granny nana aunt uncle cousin kid baby dog cat puppy kitten"
)
_STATES = (
    "tired hungry thirsty sleepy sick ill busy bored ready done back home late early new lost stuck confused excited "
    "nervous worried scared afraid fine okay alone free single married divorced pregnant retired unemployed vegan "
    "vegetarian happy sad glad alive awake asleep online offline away out up down over fit healthy curious "
    "interested serious honest human real fake same super pretty quite totally kinda sorta almost nearly gay "
    "straight bi trans queer male female deaf blind disabled autistic diabetic dyslexic anonymous nobody someone "
    "everyone anyone somebody everybody newbie noob beginner newcomer lurker guest visitor member customer client "
    "admin administrator root superuser sysadmin moderator owner system assistant bot ai robot person team staff "
    "support help question problem issue quick total complete head boss gen look looky listen right left pro "
    "premium vip gold platinum "
    "everything nothing something"
)
# Words that are never a name said bare ("I'm Italian", "I'm Tired", "Same here"); "will" is a name ("I'm Will").
_NOT_NAMES = (
    ENGLISH.stopwords
    | ENGLISH.vague_values
    | ENGLISH.negations
    | _words(f"{_JOBS} {_DEMONYMS} {_KIN_WORDS} {_STATES} {_CALENDAR}")
) - {"will"}
# Words after a bare name that show it is something else: "I'm London based", "I'm Google certified".
_NAME_FOLLOWERS = _words(
    "based born bred raised certified qualified trained licensed registered native speaker speaking descent heritage "
    "citizen national resident fan fans user users positive negative free intolerant sensitive allergic of side "
    "area style subscriber member customer client employee alum alumnus alumna graduate grad major supporter "
    "follower player"
)
_JOB_MODIFIERS = _words(
    "big huge little bit good great bad terrible awful better best worse worst decent lousy poor total complete "
    "former ex future aspiring wannabe would-be amateur hobby proud failed frustrated struggling fake pretend "
    "born natural real self-proclaimed"
)
# "we live in the moment / a society", "we moved to a bigger place": no place ("the UK" and "the Alps" are)
_NOT_PLACE = r"(?!(?-i:(?:a|an|some|another|different|bigger|smaller|larger|new|better|this|that)\b|the\s+[a-z]))"
# "I'm working as a team", "I work as well": not a job ("as a team leader" is)
_NOT_JOB = (
    r"(?!(?:\s+an?)?\s+(?:team|group|unit|pair|whole|one|usual|well|planned|expected|intended|normal|such|much)\b"
    r"(?!\s+(?:lead|leader|manager|member|captain|coach|assistant)\b))"
)
_JOB = "|".join(sorted(_JOBS.split(), key=len, reverse=True))

ENGLISH_RULES: tuple[FactRule, ...] = (
    FactRule(
        "user.name", _re(rf"\bmy\s+name(?:\s+is|'s)\s+{_V}"), "name", "profile", ("name",), max_words=4,
        reject=_words("irrelevant unimportant secret private long hard difficult weird funny common unusual spelled"),
        lowercase_ok=True,
    ),
    FactRule(
        "user.name", _re(rf"{_OPENING}name's\s+{_V}"), "name", "profile", ("name's",), max_words=4,
        reject=_words("irrelevant unimportant secret private long hard difficult weird funny common unusual spelled"),
    ),
    FactRule(
        "user.name", _re(rf"\b(?:{_IM}\s+called|calls?\s+me|i\s+go\s+by)\s+{_V}"), "name", "profile", ("call", "go by"),
        reject=_words(
            "monday tuesday wednesday thursday friday saturday sunday today tonight tomorrow later back anytime "
            f"{_KIN_WORDS} sir madam ma'am boss babe honey darling sweetie buddy bro dude"
        ),
    ),
    FactRule(
        # "im Jonas" only lower-case where a sentence opens: "Ich bin im Garten", "Im Büro." are German
        "user.name",
        _re(rf"(?:\bi(?:'m|[ \t]+(?-i:am))|{_OPENING}(?<!\w)(?-i:im))[ \t]+{_NOT_ING}{_V}"), "name", "profile",
        _IM_GATE,
        _NAME_FOLLOWERS, _NOT_NAMES, max_words=3, bare=True, confidence=0.85,
    ),
    FactRule(
        "user.name",
        _re(rf"{_GREETED}{_NOT_ING}(?P<value>[^\W\d_][\w'-]*)[ \t]+here\b(?=[ \t]*(?:[-,.!;:\n\u2013\u2014]|$))"),
        "name", "profile", ("here",), reject=_NOT_NAMES, max_words=1, bare=True, confidence=0.8,
    ),
    FactRule(
        "user.location",
        _re(
            rf"\b(?:(?:i|we)\s+(?:now\s+|currently\s+|still\s+)?(?:live|reside)\s+in"
            rf"|(?:i|we)\s+(?:have\s+|just\s+|recently\s+)?(?:moved|relocated)\s+to"
            rf"|{_IM}\s+(?:now\s+|currently\s+)?(?:based|living)\s+in)\s+{_NOT_PLACE}{_V}"
        ),
        "place", "profile", ("live", "moved", "relocated", "based", "living", "reside"), _PLACE_STOPS,
        _words("fear hope denial peace sin poverty luxury misery hell heaven harmony bliss pain constant"),
    ),
    FactRule(
        "user.location", _re(rf"\bmy\s+home\s+is\s+in\s+{_V}"), "place", "profile", ("home",), _PLACE_STOPS,
        _words("a an mess shambles chaos ruins disarray order good safe need"),
    ),
    FactRule(
        "user.hometown",
        _re(rf"\b(?:i\s+(?:grew\s+up|was\s+born\s+and\s+raised|was\s+born|was\s+raised)\s+in|{_IM}\s+originally\s+from)\s+{_V}"),
        "place", gate=("grew up", "born", "raised", "originally"), stops=_PLACE_STOPS,
    ),
    FactRule(
        "user.hometown", _re(rf"\b{_IM}\s+from\s+(?P<value>[^\n.,;!?]{{1,80}}?)\s+originally\b"), "place",
        gate=("originally",), reject=_words("the a an here there this that"),
    ),
    FactRule(
        "user.hometown", _re(rf"\bmy\s+home\s?town\s+is\s+{_V}"), "place", gate=("hometown", "home town"),
        stops=_PLACE_STOPS,
        reject=_words(
            "a an the so very really quite pretty tiny small beautiful lovely nice great boring quiet near famous "
            "known about far close only just also located situated an hour"
        ),
    ),
    FactRule(
        "user.allergies",
        _re(rf"\b{_IM}\s+(?:(?:very|really|severely|deathly|highly|also|so)\s+)?allergic\s+to\s+{_V}"),
        "list", "profile", ("allergic",), max_words=12,
    ),
    FactRule(
        "user.allergies",
        _re(
            r"\bi(?:\s+have|'ve)(?:\s+got)?\s+an?\s+(?:(?:severe|mild|bad|serious)\s+)?"
            r"(?P<value>[a-z][a-z -]{0,40}?)\s+allergy\b"
        ),
        "list", "profile", ("allergy",),
    ),
    FactRule(
        "user.allergies",
        _re(
            rf"\bi(?:\s+have|'ve)(?:\s+got)?\s+(?:an?\s+)?(?:(?:severe|mild|bad|serious)\s+)?allerg(?:y|ies)\s+to\s+{_V}"
        ),
        "list", "profile", ("allerg",), max_words=12,
        reject=_words("deal cope handle manage worry think watch consider fight battle contend live"),
    ),
    FactRule(
        "user.allergies", _re(rf"\bmy\s+(?:only\s+)?allerg(?:y|ies)\s+(?:is|are|include)\s+(?:to\s+)?{_V}"), "list",
        "profile", ("allerg",), max_words=12,
        reject=_words(
            "mild severe bad terrible awful horrible worse better fine ok okay under manageable seasonal acting "
            "flaring killing getting really so pretty quite very back gone a an the bothering driving kicking "
            "playing starting making causing giving keeping going coming ruining improving clearing much way even "
            "still always usually often sometimes actually finally just less more worst"
        ),
    ),
    FactRule(
        "user.occupation",
        _re(
            rf"\b(?:(?:i\s+work|{_IM}\s+working|{_IM}\s+employed)\s+as(?!\s+\w+\s+as\b){_NOT_JOB}(?:\s+an?)?"
            rf"|my\s+(?:job|profession|occupation)\s+is\s+(?:being\s+)?an?"
            rf"|my\s+(?:job\s+title|profession|occupation)\s+is|my\s+job\s+is(?=\s+\w+ing\b))\s+{_V}"
        ),
        category="profile", gate=("as", "job", "profession", "occupation"),
        stops=_words("at for in with since from where who this next last during until now"),
    ),
    FactRule(
        "user.occupation", _re(rf"\b{_IM}\s+an?\s+(?P<value>[^\n.,;!?]{{1,60}}?)\s+by\s+(?:profession|trade)\b"),
        category="profile", gate=("by profession", "by trade"),
    ),
    FactRule(
        "user.occupation",
        _re(
            rf"\b{_IM}\s+(?:(?:now|currently|also|actually)\s+)?an?\s+(?P<value>(?:[a-z-]+\s+){{0,2}}?(?:{_JOB}))"
            r"(?=\s*(?:[.,;:!)\n]|$)|\s+(?:at|for|in|with|and|but|so|by|from|since|here|now|too|working|based|of|on)\b)"
        ),
        category="profile", gate=_IM_GATE, reject=_JOB_MODIFIERS, confidence=0.85,
    ),
    FactRule(
        "user.employer",
        _re(rf"\b(?:i\s+work\s+(?:at|for)|{_IM}\s+working\s+(?:at|for)|{_IM}\s+employed\s+(?:at|by))\s+{_V}"),
        "org", "profile", ("work", "employed"), _words("as in since doing on where with from during until now"),
        _words("home night nights weekends myself free fun money hours"),
    ),
    FactRule(
        "user.birthday", _re(rf"\b(?:my\s+birthday(?:\s+is|'s)|i\s+was\s+born\s+on)\s+(?:on\s+)?{_V}"), "date",
        "profile", ("birthday", "born on"),
    ),
    FactRule("user.pronouns", _re(rf"\bmy\s+pronouns\s+are\s+{_V}"), "phrase", "profile", ("pronoun",), max_words=3),
    FactRule("user.{slot}_name", _re(rf"\b(?:my|our)\s+(?P<slot>{_PETS}){_NAMED}\s+{_V}"), "name", gate=_NAME_GATE),
    FactRule(
        "user.{slot}_name",
        _re(rf"\b(?:i|we)(?:\s+have|'ve)(?:\s+got)?\s+an?\s+(?P<slot>{_PETS}|{_KIN})\s+(?:called|named)\s+{_V}"),
        "name", gate=_NAME_GATE,
    ),
    FactRule("user.{slot}_name", _re(rf"\b(?:my|our)\s+(?P<slot>{_KIN}){_NAMED}\s+{_V}"), "name", gate=_NAME_GATE),
    FactRule(
        "user.{slot}_name",
        _re(rf"\b(?:my|our)\s+(?:(?:little|big|baby|older|younger|elder|eldest|youngest|twin|late)\s+)?"
            rf"(?P<slot>{_PETS}|{_KIN}),?[ \t]+{_NOT_ING}{_V}"),
        "name", gate=("my", "our"), stops=_NAME_FOLLOWERS, reject=_NOT_NAMES, max_words=3, bare=True, confidence=0.85,
    ),
    FactRule(
        "user.favorite_{slot}",
        _re(rf"\bmy\s+(?:absolute\s+|all[\s-]time\s+)?favou?rite\s+(?P<slot>[a-z]+(?:\s+[a-z]+){{0,2}}?)\s+(?:is|are)\s+{_V}"),
        gate=("favorite", "favourite"),
    ),
    FactRule("user.prefers.{value}", _re(rf"\bi\s+{_ADV}prefer\s+{_V}"), gate=("prefer",), max_words=8),
    FactRule(
        "user.likes.{value}", _re(rf"\bi\s+{_ADV}(?:like|love|enjoy|adore)\s+{_V}"),
        gate=("like", "love", "enjoy", "adore"),
        reject=_words("think know say see ask believe hear imagine mention add point keep hope help thank"),
    ),
    FactRule(
        "user.dislikes.{value}",
        _re(rf"\bi\s+{_ADV}(?:hate|dislike|detest|can'?t\s+stand|cannot\s+stand|(?:don'?t|do\s+not)\s+(?:really\s+)?like)\s+{_V}"),
        gate=("hate", "dislike", "detest", "stand", "like"),
    ),
)  # fmt: skip
"""The English rules; :data:`KEYS` documents the keys they write."""

_RULES: dict[str, tuple[FactRule, ...]] = {"en": ENGLISH_RULES}


def register_rules(language: str, rules: Iterable[FactRule]) -> None:
    """Register (or replace) the fact rules for ``language``; its cues must be registered first."""
    cues_for(language)
    rules = tuple(rules)
    if not all(isinstance(rule, FactRule) for rule in rules):
        msg = "register_rules() takes FactRule values; build each with FactRule(key, re.compile(...))"
        raise UsageError(msg)
    _RULES[language] = rules


def capture_facts(text: str, *, language: str = "en") -> list[FactCandidate]:
    """Facts the user states about themselves in ``text``, in order, the last one per key.

    A language with cues but no rules registered captures nothing.

    >>> [(f.key, f.value) for f in capture_facts("Hi! My name is Ada Lovelace and I live in London.")]
    [('user.name', 'Ada Lovelace'), ('user.location', 'London')]
    >>> capture_facts("If I moved to Rome, would I like it?")
    []
    """
    cues = cues_for(language)
    if not isinstance(text, str):
        msg = f"capture_facts() takes the user's text as a str, not {type(text).__name__}"
        raise UsageError(msg)
    window = text[:_MAX_SCAN]
    low = window.lower()
    active = [rule for rule in _RULES.get(language, ()) if not rule.gate or any(g in low for g in rule.gate)]
    if not active:
        return []
    window = window.replace("\u2019", "'")
    found: dict[str, tuple[int, FactCandidate]] = {}
    for rule in active:
        position = 0
        for _ in range(_MAX_MATCHES):  # bounded: a message repeating one phrase costs no more
            match = rule.pattern.search(window, position)
            if match is None:
                break
            fact = _candidate(rule, match, window, cues)
            if fact is not None and (fact.key not in found or found[fact.key][0] < match.start()):
                found[fact.key] = (match.start(), fact)
            # the value runs to the line's end, so a later statement may hide inside it
            position = max(match.start("value"), match.start() + 1)
    return [fact for _, fact in sorted(found.values(), key=lambda item: item[0])]


def slug(text: str, *, skip: frozenset[str] = frozenset(), words: int = 0) -> str:
    """``text`` as a key segment: ASCII, lowercase, ``_`` between words (optionally the first ``words`` kept)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    parts = [w for w in re.split(r"[^a-z0-9]+", ascii_text) if w and w not in skip]
    return "_".join(parts[:words] if words else parts)[:40].strip("_")


def _candidate(rule: FactRule, match: re.Match[str], text: str, cues: LanguageCues) -> FactCandidate | None:
    start = match.start()
    lo = max(0, start - 300)
    head = max(text.rfind(c, lo, start) for c in ".!?\n")
    sentence_start = head + 1 if head >= 0 else lo
    if _blocked(text[sentence_start:start], cues):
        return None
    raw = match.group("value")
    if not raw:
        return None
    clause = _clause(raw, rule.shape, cues)
    if raw[len(clause) :].lstrip().startswith("?"):
        return None
    shaped = _shape(_INVISIBLE.sub("", clause), rule, cues)
    if shaped is None:
        return None
    value, confidence = shaped
    key = _key(rule, match, value, cues)
    if key is None:
        return None
    value_end = match.start("value") + len(clause)
    ends = [i for i in (text.find(c, value_end) for c in ".!?\n") if i >= 0]
    evidence = text[sentence_start : min(ends, default=len(text)) + 1].strip()[:300]
    return FactCandidate(key, value, confidence, rule.category, evidence, "rules")


def _blocked(prefix: str, cues: LanguageCues) -> bool:
    """A question, negation, hypothetical or reported speech before the match."""
    words = _WORD.findall(prefix.lower())
    if words and words[0] in cues.question_starts:
        return True
    if any(w in cues.negations or w in cues.hypotheticals or w.endswith("n't") for w in words):
        return True
    return bool(cues.reported_speech and cues.reported_speech.search(prefix))


def _clause(raw: str, shape: str, cues: LanguageCues) -> str:
    """``raw`` up to the first real clause boundary; lists keep "and", names of places keep "and Tobago"."""
    if cues.clause_boundary is None:
        return raw
    for m in cues.clause_boundary.finditer(raw):
        token = m.group().strip().lower()
        rest = raw[m.end() :]
        following = rest.split(None, 1)[0] if rest.strip() else ""
        joins = following.lower().strip(",.") not in cues.stopwords
        if token == ".":
            before = _LAST_WORD.search(raw[: m.start()])
            word = before.group(1) if before else ""
            if (rest[:1] and not rest[:1].isspace()) or word.lower() in _TITLES or (len(word) == 1 and word.isupper()):
                continue
        elif joins and (
            (token in (",", "and", "or", "plus") and shape == "list")
            or (token == "and" and shape in ("place", "org") and following[:1].isupper())
        ):
            continue
        return raw[: m.start()]
    return raw


def _trim(value: str, cues: LanguageCues) -> str:
    """Strip quotes, punctuation and fillers ("by the way", "now", "though") from both ends."""
    value = value.strip(" \t\"'`*_~,;:-")
    fillers = _fillers(cues.fillers)
    if fillers is not None:
        value = fillers.sub("", value).strip(" \t\"'`*_~,;:-")
    if re.search(r"(?:^|[\s.])[A-Z]\.$", value):
        return value
    return value.rstrip(".!?,;:'\" ")


@functools.lru_cache(maxsize=16)
def _fillers(fillers: tuple[str, ...]) -> re.Pattern[str] | None:
    if not fillers:
        return None
    alternatives = "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in sorted(fillers, key=len, reverse=True))
    return re.compile(rf"^(?:(?:{alternatives})\b[\s,;:-]*)+|(?:[\s,;:-]+(?:{alternatives}))+$", re.IGNORECASE)


def _shape(clause: str, rule: FactRule, cues: LanguageCues) -> tuple[str, float] | None:
    words = _trim(clause, cues).split()
    if rule.shape in ("phrase", "list") and len(words) > 1 and words[0].lower() == "to":
        words = words[1:]
    if not words or words[0].lower() in cues.negations | {"no", "not", "never"}:
        return None
    if rule.bare:
        return _bare_name(words, rule, cues)
    for i in range(1, len(words)):
        low = words[i].lower().strip(",.")
        before_number = low in ("in", "on", "since", "at") and words[i + 1 : i + 2] and words[i + 1][:1].isdigit()
        if low in rule.stops or before_number:
            words = words[:i]
            break
    if rule.shape == "name":
        return _name(words, rule, cues)
    value = _trim(" ".join(words[: rule.max_words]), cues)
    first = value.split()[0].lower() if value else ""
    if not first or value.lower() in rule.reject or first in rule.reject or first in cues.vague_values:
        return None
    if (
        rule.shape == "date"
        and not any(c.isdigit() for c in value)
        and not cues.calendar_words & set(value.lower().split())
    ):
        return None
    if rule.shape in ("place", "org") and len(value) > 80:
        value = value[:80].rsplit(" ", 1)[0]
    return (value, rule.confidence) if any(c.isalnum() for c in value) else None


def _name(words: list[str], rule: FactRule, cues: LanguageCues) -> tuple[str, float] | None:
    kept: list[str] = []
    for word in words[: rule.max_words]:
        if word[:1].isupper() or (kept and word.lower() in cues.name_particles):
            kept.append(word)
        else:
            break
    while kept and kept[-1].lower() in cues.name_particles:
        kept.pop()
    if kept and kept[0].lower().rstrip(".,;:!") in rule.reject:
        return None
    if kept:
        return _trim(" ".join(kept), cues), rule.confidence
    word = words[0]
    low = word.lower()
    plain = word.isalpha() and low not in rule.reject and low not in cues.vague_values and low not in cues.stopwords
    return (word, min(rule.confidence, 0.7)) if rule.lowercase_ok and len(words) == 1 and plain else None


def _bare_name(words: list[str], rule: FactRule, cues: LanguageCues) -> tuple[str, float] | None:
    """The leading capitalised words of ``words`` if they can only be a name (see :attr:`FactRule.bare`)."""
    kept: list[str] = []
    for word in words:
        if not (word[:1].isupper() or (kept and word.lower() in cues.name_particles)):
            break
        kept.append(word)
    while kept and kept[-1].lower() in cues.name_particles:
        kept.pop()
    after = words[len(kept)].lower().strip(",.;:!?") if len(words) > len(kept) else ""
    if not kept or len(kept) > rule.max_words or after in rule.stops or after[:1].isdigit():
        return None
    if len(after) > 4 and after.endswith("ing") and after.isalpha() and words[len(kept)][:1].islower():
        return None  # "I'm Christmas shopping", "I'm Uber driving": an activity, not a name
    for word in kept:
        core = word.rstrip(".,;:!?")
        letters = [c for c in core if c.isalpha()]
        if core.endswith(("'s", "'")) or (len(letters) >= 3 and core.isupper()):
            return None
        if any(part in rule.reject or part in rule.stops for part in re.split(r"[-'.]", core.lower())):
            return None
    return _trim(" ".join(kept), cues), rule.confidence


def _key(rule: FactRule, match: re.Match[str], value: str, cues: LanguageCues) -> str | None:
    slot = slug(match.group("slot")) if "slot" in match.re.groupindex else ""
    slot = cues.aliases.get(slot, slot)
    topic = slug(value, skip=cues.function_words, words=3)
    if ("{slot}" in rule.key and not slot) or ("{value}" in rule.key and not topic):
        return None
    key = rule.key.format(slot=slot, value=topic)
    return key if _KEY.fullmatch(key) else None
