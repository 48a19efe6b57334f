"""What the router reads in a thought, before any weight: `reading(ctx)` counts, factor by factor, what the
thought holds (words, questions, parts, each signal's distinct terms), what it asks (the floors' asks) and whether
the ask is simple (the ceilings' caps). `router` weighs a reading into a score and hats.

Any of the languages in `router_terms`: the structure (sentences, questions, parts, options) is read from
punctuation and layout in any script, the signals from per-language term tables. Pasted material (code, logs,
stack traces, tables, long lists) is set aside first: it makes a thought long, not hard, and its words (ERROR,
failed, crash) are not the user's ask. Only the start and the end of a long thought are read (`_READ` characters;
then at most `_WINDOW` of its prose for the signals): the ask sits there, and it keeps any thought under 1 ms.

The ask decides (round 5): a lookup, a sum, a next step or a request passed on stays simple however much situation
is told around it; a question proposing a course of action ("Kill the hardware line?", "Paper zurückziehen?",
"Licencier Julien ?") is a decision however short.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cache

from .analysis import ThoughtContext
from .router_terms import (
    DECISION_QUESTIONS,
    FACT_ASKS,
    FACT_QUESTIONS,
    HOW_TERMS,
    LETTERS,
    LOOKUP_TERMS,
    OR_AMOUNT,
    OR_TERMS,
    RELAYED_TERMS,
    REQUEST_TERMS,
    SEQUENCE_TERMS,
    SIGNAL_TERMS,
    STEP_OPENERS,
    STEP_TERMS,
    STOPWORDS,
    WHETHER,
)
from .router_weights import FLOORS

# The signals, in factor order; the router says which hats each calls for.
SIGNALS: tuple[str, ...] = (
    "decision",
    "dilemma",
    "risk",
    "stakes",
    "stakeholders",
    "planning",
    "ideation",
    "people",
    "opportunity",
    "facts",
)
LOW_CONFIDENCE = 0.5  # a crash step's confidence below this is a doubt

_PLAN_AT_STAKE = ("stakes", "risk", "people", "stakeholders")  # an ask whose floor another factor shows
_SESSION_STEP = frozenset(("revision", "branch", "low_confidence"))
_SECOND_ANGLE = frozenset(("branch", "low_confidence", "ideation"))
_RAISED = frozenset(("either_stakes", "planning_stakes"))  # asks that already want a third angle
_THIRD_ANGLE = ("stakes", "people", "stakeholders")
_YES_OR_NO = re.compile(r"\b(?:yes or no|ja oder nein|oui ou non|s[ií] o no|sim ou não)\b")
_AT_STAKE = frozenset(("stakes", "risk", "stakeholders"))  # in a short thought's question: no lookup
_SHORT_ASK = (4, 12)  # "Total?", "Expected hires?", "大概需要多少？": words (Latin), characters (CJK)
_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
_ENOUGH_NUMBERS = 3  # a short question after this many numbers asks for a sum
_WEIGHING = frozenset(("either", "either_stakes", "revision", "branch", "low_confidence"))  # asks that are never simple
# A clause opens after these (or at the start).
_CLAUSE_MARKS = ("", ".", ":", ";", ",", "!", "?", "。", "：", "；", "，", "、", "！", "？", "-", "—")
# "Next: check whether pg_wal is the bulk of it": a check to run, not a choice to weigh
_CHECK_WHETHER = re.compile(
    r"\b(?:check|see|verify|confirm|find out|test) (?:whether|if)\b|\b(?:prüfen|prüfe|nachsehen|schauen|checken),? ob\b"
    r"|\b(?:vérifier|voir|contrôler) si\b|\b(?:comprobar|verificar|ver|revisar|chequear) si\b"
    r"|\b(?:verificar|ver|checar|conferir) se\b"
)
# After "now", "then", "jetzt": someone else acting is the situation told ("Jetzt will der Chef ..."), not a step.
_TOLD = re.compile(
    r"[\s,:]*(?:will|wollen|muss|müssen|soll|sollen|ist|sind|hat|haben|kann|können|wird|werden|der|die|das|"
    r"wants|is|are|has|have|says|said|the|my|our|his|her|their|they|he|she|we|"
    r"el|la|los|las|quiere|dice|le|les|il|elle|ils|on|o|a|os|as|quer|diz)\b"
)
# Lookup words that may as well pick among options as ask for a fact.
_QUOTED = re.compile(r"„[^“”\"\n]*[“”\"]|“[^”\n]*”|\"[^\"\n]*\"|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』")
_QUOTE_MARKS = ("„", "“", '"', "«", "「", "『")
_OPEN_QUOTE = re.compile(r"[„“「『][^„“”«»「」『』\n]*$")
_CHOOSING = frozenset(
    (
        "which",
        "welche",
        "welcher",
        "welches",
        "welchen",
        "welchem",
        "cuál",
        "cuáles",
        "quel",
        "quelle",
        "quels",
        "quelles",
        "lequel",
        "laquelle",
        "qual",
        "quais",
        "哪",
        "どの",
        "what's",
        "what is",
        "what are",
        "what was",
    )
)
_BARE_WH = frozenset(
    [
        "when",
        "where",
        "who",
        "wann",
        "wo",
        "wer",
        "quand",
        "où",
        "qui",
        "cuándo",
        "dónde",
        "quién",
        "quando",
        "onde",
        "quem",
        "什么时候",
        "何时",
        "いつ",
        "どこ",
        "誰",
    ]
)
_POLITE = re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?|please |kannst du |könnten sie |können sie |"
    r"puedes |podrías |pouvez-vous |peux-tu |tu peux |pode |podes |você pode |consegue )"
)
_WEIGHED = frozenset(("decision", "planning", "ideation"))  # signals that make the user's words more than a lookup
_DOCUMENT_WORDS = 150  # prose this long around a lookup is a pasted document, not the user's situation

_READ, _READ_HEAD = 6000, 4500  # characters of the thought read: its first _READ_HEAD and the rest from its end
# Prose read for signals: (window, head) per script; a Chinese or Japanese character says more than a Latin one.
_WINDOW = {"latin": (2000, 1500), "cjk": (1000, 750)}
_SENTENCE_WORDS = 3  # a shorter fragment ("unbounded LRU?") is not a part of its own
_UNMARKED_QUESTIONS = ("en", "de", "fr")  # where an opener alone says it asks (not Spanish "Reviso los logs")
_LONG_LIST = 8  # a list longer than this is data pasted in, not parts of the thought
_CJK_WORDS_PER_CHAR = {"zh": 0.6, "ja": 0.45}  # a Chinese or Japanese character carries about this much of a word
_FREE_COMMAS = 1  # a comma or two is style; more is a list of clauses
_RUN_LINES, _RUN_CHARS = 6, 300  # this many lines in a row, this long, with no question among them, are material
_FRAGMENT_LINES = 2  # in a thought with material, a run this long is more of it

# --- layout: what is pasted material, what is prose -----------------------------------------------------------
# Line patterns start with a literal newline (the text gets one in front) so the regex engine jumps from line
# start to line start instead of trying every character: this is what keeps a long thought cheap.

_FENCED = re.compile(r"\n[ \t]*(```|~~~).*?(?:\n[ \t]*\1[^\n]*|\Z)", re.DOTALL)
_PASTED_LINE = re.compile(
    r"\n(?:"
    r"[ \t]*\[?(?:\d{4}-\d\d-\d\d|\d\d?:\d\d:\d\d|\d{2}/\d{2}/\d{4}[ T]\d)"  # timestamped log line
    r"|[ \t]*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|SEVERE|NOTICE)\b[\]:]?[ \t]"  # log level
    r"|[ \t]+at [\w$.<>/\\]+[(:]"  # Java / JavaScript stack frame
    r"|[ \t]*File \"[^\"\n]+\", line \d+"  # Python stack frame
    r"|Traceback \(most recent call last\)"
    r"|[ \t]*(?:[\w$]+\.)*\w*(?:Error|Exception|Panic)\b(?::|$)"  # exception line
    r"|(?: {4,}|\t+)(?![-*•]|\d{1,2}[.)])\S"  # indented code
    r"|[ \t]*(?:def |class |import |from \S+ import|return\b|function\b|const |let |var |public |private |"
    r"#include|package |SELECT |INSERT |UPDATE |DELETE |CREATE |\$ |>>> |[{}\[\]<])"  # code, shell
    r"|[^\n]{0,300}[{}][ \t]*(?=\n|\Z)|[^\n]{0,200}[=(][^\n]{0,200};[ \t]*(?=\n|\Z)"  # block, statement end
    r"|[ \t]*\|[^\n]*\|[ \t]*(?=\n|\Z)"  # table row
    r"|[^\n]{0,80}?[!-~]{60}"  # a token too long for prose: base64, minified code, a long URL
    r"|[!-+\--~]*(?:,[!-+\--~]*){3,}[ \t]*(?=\n|\Z)|[^\s;]*(?:;[^\s;]*){3,}[ \t]*(?=\n|\Z)"  # CSV row (, or ;)
    r"|[ \t]*[\w.-]+=\S*(?:[ \t]+[\w.-]+=\S*)*[ \t]*(?=\n|\Z)"  # key=value line
    r")[^\n]*",
)
# A list marker: "- ", "1. ", "a) ", "(2) "; CJK markers need no space after them.
_ITEM = (
    r"[ \t]*(?:(?:[-*•]|\d{1,2}[.)]|[a-zA-Z][.)]|\(\d{1,2}\))[ \t]+"
    r"|(?:[・●▪◦]|\d{1,2}[．、]|（\d{1,2}）|[①-⑳])[ \t]*)\S"
)
_LIST_ITEM = re.compile(r"\n" + _ITEM + r"[^\n]*")
_ITEM_START = re.compile(_ITEM)
# A chunk: text up to a sentence end ("." etc. followed by a space, CJK full stops) or a line end.
_CHUNK = re.compile(r"[^.!?。！？\n]*(?:[.!?]+(?=[^\s.!?])[^.!?。！？\n]*)*(?:[.!?。！？]+|\n|\Z)")
_QUESTION_PARTICLES = ("か", "かな", "吗", "呢")  # a question without a question mark
_INLINE_PARTS = re.compile(r"(?<!\w)(?:\(\d\)|\d\)|（\d）)")
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
# Japanese "A か B か": "続けるか、集約するか。" or "PostgreSQLかMongoDBか、"; not "何か月で…されますか？".
_JA_EITHER = re.compile(r"か[、，,][^。？?\s]{1,40}か(?:[。？?を で]|どう|迷|$)|か[^。？?\s、]{1,20}か[、，,]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
_KANA = re.compile(r"[\u3040-\u30ff]")
_ASCII_LETTERS = re.compile(r"[A-Za-z]")
_LETTERS = re.compile(r"[^\W\d_]+")
_ASCII_WORD = re.compile(r"[A-Za-z0-9][\w.+-]*")
_CURRENCY = re.compile(r"[$€£¥₹]\s?\d")
_AMOUNT = re.compile(
    r"\d(?:[\d.,]*\d)?\s?(?:k|m|bn|mio\.?|mrd\.?|million\w*|millones|milhões|milliard\w*|billion\w*|"
    r"bilhões|mil millones|万|亿|億|万円|元|円|euros?|dollars?|usd|eur|reais|r\$)(?!\w)",
)
_PERCENT = re.compile(r"\d\s?[%％]|百分之")


def _variants(term: str) -> list[str]:
    """The term as written, and without its accents (unless marked `!`)."""
    if term.startswith("!"):
        return [term[1:]]
    if _CJK.search(term):  # kana decompose too (ず = す + ゙): stripping would make other words
        return [term]
    plain = "".join(c for c in unicodedata.normalize("NFD", term) if not unicodedata.combining(c))
    plain = plain.replace("ß", "ss")
    return [term] if plain == term else [term, plain]


_Node = dict[str, "_Node"]


def _trie(terms: list[str]) -> str:
    """One regex alternation for many terms, shared prefixes factored out: a miss costs one character test."""
    root: _Node = {}
    for term in terms:
        node = root
        tokens = [r"\w*" if c == "*" else r"\s+" if c == " " else re.escape(c) for c in term]
        for token in tokens:
            node = node.setdefault(token, {})
        node[""] = {}

    def emit(node: _Node) -> str:
        alternatives = [token + emit(child) for token, child in sorted(node.items()) if token]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


@dataclass(frozen=True)
class _Vocabulary:
    words: re.Pattern[str]  # whole-word terms (Latin scripts), English always included
    inside: re.Pattern[str] | None  # terms matched anywhere: Chinese, Japanese, German compound endings
    signal_of: dict[str, str]  # matched term (or its stem) -> signal name
    stems: tuple[int, ...]  # lengths of the stems, longest first
    either: re.Pattern[str]  # the words for "or"
    dilemma: re.Pattern[str]  # how a yes/no question about what to do opens


@cache
def _vocabulary(lang: str) -> _Vocabulary:
    words: list[str] = []
    inside: list[str] = []
    signal_of: dict[str, str] = {}
    stems: set[int] = set()
    cjk = lang in ("zh", "ja")
    codes = ("en",) if lang == "en" else (lang, "en")  # the language's own meaning of a word wins
    tables = [(code, name, by_lang[code]) for name, by_lang in SIGNAL_TERMS.items() for code in codes]
    tables += [(code, "structure", SEQUENCE_TERMS[code]) for code in codes]
    for code, name, listed in tables:
        for raw in (t.strip() for t in listed.split(",")):
            if not raw or (raw.startswith("^") and lang != "en"):
                continue
            raw = raw.lstrip("^")
            infix, raw = raw.startswith("~"), raw.lstrip("~")
            forms = _variants(raw)
            if code != lang and raw.endswith("*"):  # borrowed English words as such: "demand*" is not "demander"
                forms = [raw[:-1], raw[:-1] + "s"]
            for term in forms:
                key = term.rstrip("*")
                signal_of.setdefault(key, name)
                if term.endswith("*"):
                    stems.add(len(key))
                (inside if infix or (cjk and _CJK.search(term)) else words).append(term)
            if infix:
                words.append(raw)  # the word on its own, too
    either = [t.strip() for code in codes for t in OR_TERMS[code].split(",")]
    spaced = [t for t in either if not _CJK.search(t)]
    amounts = [v for code in codes for t in OR_AMOUNT[code].split(",") for v in _variants(t.strip())]
    # "502 or 504", "v2 or v3": which value is a fact to look up, not options to weigh
    either_re = (
        r"(?<!\d )(?<![\w-])(?:" + "|".join(spaced) + r")(?![\w-])(?!\s+(?:" + "|".join(amounts) + r")(?![\w-]))(?! \d)"
    )
    if cjk:
        either_re += "|" + "|".join(t for t in either if _CJK.search(t))
        either_re += "|" + _JA_EITHER.pattern if lang == "ja" else ""
    return _Vocabulary(
        words=re.compile(r"(?<![\w-])" + _trie(words) + r"(?![\w-])"),
        inside=re.compile(_trie(inside)) if inside else None,
        signal_of=signal_of,
        stems=tuple(sorted(stems, reverse=True)),
        either=re.compile(either_re),
        dilemma=re.compile(DECISION_QUESTIONS[lang]),
    )


def _terms_pattern(table: dict[str, str], lang: str) -> re.Pattern[str]:
    """The terms of `lang` (and English), whole words in Latin scripts, anywhere in Chinese and Japanese."""
    codes = ("en",) if lang == "en" else (lang, "en")
    terms = [v for code in codes for term in table[code].split(",") if term.strip() for v in _variants(term.strip())]
    spaced = [t for t in terms if not _CJK.search(t)]
    pattern = r"(?<![\w-])" + _trie(spaced) + r"(?![\w-])"
    if lang in ("zh", "ja"):
        pattern += "|" + _trie([t for t in terms if _CJK.search(t)])
    return re.compile(pattern)


@cache
def _simple_asks(lang: str) -> tuple[re.Pattern[str], ...]:
    """How a lookup is asked, requested, a short question asks how to act, and a next step is stated."""
    tables = (LOOKUP_TERMS, REQUEST_TERMS, HOW_TERMS, STEP_TERMS, RELAYED_TERMS, STEP_OPENERS)
    return tuple(_terms_pattern(table, lang) for table in tables)


@cache
def _whether(lang: str) -> re.Pattern[str]:
    return re.compile(WHETHER[lang])


@cache
def _stopwords() -> dict[str, str]:
    """Each frequent word and its language (a word frequent in two of them tells nothing, so it is left out)."""
    seen: dict[str, list[str]] = {}
    for lang, words in STOPWORDS.items():
        for word in words.split():
            seen.setdefault(word, []).append(lang)
    return {word: langs[0] for word, langs in seen.items() if len(langs) == 1}


def _language(text: str) -> str:
    """The language of the prose: by script for Chinese and Japanese, by frequent words for the rest."""
    head = text[:500]
    cjk = len(_CJK.findall(head))
    # Written in Chinese or Japanese: most of the text, or the opening line (the user's words, before an English
    # log or trace pasted in prose).
    opening = head.lstrip().partition("\n")[0]
    opened = len(_CJK.findall(opening))
    if (cjk >= 2 and cjk * 4 > len(head) - head.count(" ")) or (
        opened >= 5 and opened * 2 > len(_ASCII_LETTERS.findall(opening))
    ):
        return "ja" if len(_KANA.findall(head)) >= 2 else "zh"
    counts = {lang: sum(head.count(c) for c in LETTERS.get(lang, ())) for lang in STOPWORDS}
    counts["fr"] += head.count(" ?") + head.count(" !") + head.count("«")  # French typography spaces them
    stopwords = _stopwords()
    for word in _LETTERS.findall(head):
        if (lang := stopwords.get(word)) is not None:
            counts[lang] += 1
    best = max(counts, key=lambda lang: (counts[lang], lang == "en"))
    return best if counts[best] > counts["en"] else "en"


def _prose(text: str) -> tuple[str, int, int]:
    """(the prose, characters of pasted material set aside, items of long lists set aside)."""
    prose = "\n" + text
    if "```" in prose or "~~~" in prose:
        prose = _FENCED.sub("\n", prose)
    before = len(prose)
    prose = _PASTED_LINE.sub("", prose)
    runs = _material_runs(prose, shown=before - len(prose) >= _RUN_CHARS)
    listed = 0
    # A long list is data; so is any list in a thought that has shown other material (a report's own list).
    if len(_LIST_ITEM.findall(runs)) > (_LONG_LIST if runs == prose else 0):
        runs, listed = _LIST_ITEM.subn("", runs)
        runs = _material_runs(runs, shown=True)  # the list's header and notes are part of what was pasted
    return runs, max(0, len(text) + 1 - len(runs)), listed


def _material_runs(prose: str, shown: bool) -> str:
    """The prose without material: runs of lines that no sentence of the user's breaks (tables, documents, output).

    A paragraph's lines are cut into runs by questions and list items (those stay prose: the ask, or a list the
    long-list rule weighs); a run of _RUN_LINES lines and _RUN_CHARS characters is material. Once a thought has
    shown material (`shown`: pasted lines already set aside, or such a run), its shorter runs (the fragments
    between blank lines of a dump) are taken to be more of it.
    """
    if prose.count("\n") < (_FRAGMENT_LINES if shown else _RUN_LINES):
        return prose
    lines = prose.split("\n")
    runs: list[list[int]] = [[]]
    asks: set[int] = set()
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped[-1] in "?？" or _ITEM_START.match(line):
            runs.append([])
            asks.add(number)
        else:
            runs[-1].append(number)

    def long(run: list[int]) -> bool:
        return len(run) >= _RUN_LINES and sum(len(lines[i]) for i in run) >= _RUN_CHARS

    material = {i for run in runs if long(run) for i in run[lines[run[0]].rstrip().endswith((":", "：")) :]}
    if material or shown:
        material |= {i for run in runs if len(run) >= _FRAGMENT_LINES for i in run}
    return "\n".join(line for i, line in enumerate(lines) if i not in material)


def _signal_terms(text: str, vocabulary: _Vocabulary) -> tuple[dict[str, dict[str, str]], Counter[str]]:
    """Per signal, {term or stem: the first form seen} in order of appearance (a stem's forms count once), and
    how many times the signal's terms occur in all."""
    found: dict[str, dict[str, str]] = {}
    occurrences: Counter[str] = Counter()
    matches = vocabulary.words.findall(text)
    if vocabulary.inside is not None:
        matches += vocabulary.inside.findall(text)
    for surface, times in Counter(matches).items():  # each form once: a long thought repeats its words
        term = " ".join(surface.split())
        key = term
        name = vocabulary.signal_of.get(term)
        for length in vocabulary.stems if name is None else ():
            if (name := vocabulary.signal_of.get(term[:length])) is not None:
                key = term[:length]
                break
        if name is not None:
            found.setdefault(name, {}).setdefault(key, term)
            occurrences[name] += times
    return found, occurrences


def _shown(terms: list[str], limit: int = 4) -> str:
    more = f" +{len(terms) - limit}" if len(terms) > limit else ""
    return ", ".join(terms[:limit]) + more


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Reading:
    """What the router read in a thought, before any weight: per factor, its units and what they were."""

    counts: dict[str, int]  # factor: units (words, questions, parts, distinct terms, positions; 1 for a session cue)
    details: dict[str, str]
    asks: tuple[str, ...]  # what is asked, of FLOORS' keys, in factor order
    pasted: bool  # pasted material was set aside
    caps: tuple[str, ...] = ()  # of CEILINGS' keys: a simple ask, or a second angle with nothing more in play
    asked: str = ""  # the thought's questions, lower-cased
    lang: str = "en"

    def asked_about(self) -> frozenset[str]:
        """The signals whose terms are in the thought's questions (read only when a one-hat route needs them)."""
        return frozenset(_signal_terms(self.asked, _vocabulary(self.lang))[0]) if self.asked else frozenset()


def reading(ctx: ThoughtContext) -> Reading:
    """Count what the thought holds, factor by factor; `route` weighs it (and the training script fits it)."""
    text = ctx.thought
    if len(text) > _READ:  # cut at line ends, so that a pasted line is not taken for prose by losing its start
        start, end = text[:_READ_HEAD], text[_READ_HEAD - _READ :]
        text = start[: start.rfind("\n") + 1 or None] + "\n" + end[end.find("\n") + 1 :]
    prose, pasted, listed = _prose(text)
    lang = _language(prose[:500].lower())
    cjk = lang in _CJK_WORDS_PER_CHAR
    window, head = _WINDOW["cjk" if cjk else "latin"]
    read = prose if len(prose) <= window else prose[:head] + "\n\n" + prose[head - window :]
    read = read.lower().replace("’", "'")
    vocabulary = _vocabulary(lang)
    counts: dict[str, int] = {}
    details: dict[str, str] = {}
    asks: list[str] = []

    def add(name: str, count: int, detail: str) -> None:
        if count > 0:
            counts[name], details[name] = count, detail

    if cjk:
        chars = sum(map(len, _CJK_RUN.findall(prose)))
        words = round(chars * _CJK_WORDS_PER_CHAR[lang]) + len(_ASCII_WORD.findall(prose))
    else:
        words = len(prose.split())
    aside = [f"{pasted:,} chars pasted"] if pasted else []
    aside += [f"a {listed}-item list"] if listed else []
    length_detail = _plural(words, "word") + (f" ({' and '.join(aside)} not counted)" if aside else "")
    if len(ctx.thought) > _READ:
        length_detail += f" in the first {_READ_HEAD:,} and last {_READ - _READ_HEAD:,} of {len(ctx.thought):,} chars"
    add("length", words, length_detail)
    sentences = questions = items = 0
    either = False
    dilemma: str | None = None
    chunks = [c for c in _CHUNK.findall(read) if c.strip()]
    asked_chunks: list[str] = []
    for number, chunk in enumerate(chunks):
        if _ITEM_START.match(chunk):
            items += 1
        elif len(chunk.split()) >= _SENTENCE_WORDS or (cjk and len(chunk.strip()) >= 5):
            sentences += 1
        # A question quoted inside a description (a survey's, a letter's) is not the user's; one the thought ends
        # with is ('The user writes: "Should I report my manager?"').
        own = _unquoted(chunk)
        asked = "?" in own or "？" in own or (cjk and own.rstrip(" \t\n。").endswith(_QUESTION_PARTICLES))
        # A last line typed without its question mark ("Should I take the offer") still asks.
        unmarked = number == len(chunks) - 1 and lang in _UNMARKED_QUESTIONS and chunk.rstrip()[-1:].isalnum()
        if asked:
            questions += 1
            asked_chunks.append(chunk)
        if dilemma is None and lang in WHETHER and (weighed := _whether(lang).search(chunk)) is not None:
            dilemma = weighed.group()[-12:]
        if asked or unmarked:
            offers = vocabulary.either.search(chunk) is not None and not _asks_what_is(chunk, lang)
            either = either or offers
            if dilemma is None:
                opener = chunk.strip().lstrip("¿¡ ").rpartition(": ")[2].lstrip("\"'“„«‘ ")
                opened = _proposed(vocabulary.dilemma.search(opener), ctx.thought)
                # Without its question mark, a bare verb first is as likely a step ("rerun the sim, then diff it",
                # "als nächstes die Paletten umbuchen"): only the forms that say who decides count there.
                told = opened is not None and not asked
                if told and opened is not None and {"inf", "act"} & {k for k, v in opened.groupdict().items() if v}:
                    opened = None
                # "A or B?" is a choice between options ("Postgres or MongoDB?"), unless both are courses of action
                # ("Do we keep them as contractors or hire them?"): then it weighs doing something, like a yes or no.
                # "Does this function drop the last student, yes or no?": the answer's form, not a decision
                if opened is not None and _YES_OR_NO.search(opened.group()) and _asks_what_is(chunk, lang):
                    opened = None
                if opened is not None and offers and not _YES_OR_NO.search(opener):
                    rest = vocabulary.either.split(opener, maxsplit=1)[-1].strip(" ,¿¡")
                    second = _proposed(vocabulary.dilemma.search(rest), ctx.thought)
                    # A German verb at the end serves both options ("Sollen wir Postgres oder MongoDB nehmen?"):
                    # two courses of action each have one ("Insolvenz anmelden oder noch durchhalten?").
                    if second is not None and second.groupdict().get("inf") and not opened.groupdict().get("inf"):
                        second = None
                    opened = opened if second else None
                if opened is not None:
                    dilemma = opened.group().strip() or "yes/no question"
    add("questions", questions, _plural(questions, "question"))
    # "Keep RabbitMQ, or move to SQS and lose the ordering. Which makes more sense?": options told, then weighed
    if not either and dilemma is None and asked_chunks and not pasted and vocabulary.either.search(read):
        either = any(_signal_terms(chunk, vocabulary)[0].get("decision") for chunk in asked_chunks)
    terms, occurrences = _signal_terms(read, vocabulary)
    items = 0 if listed else items
    sequence = len(terms.pop("structure", ()))
    semicolons = read.count(";") + read.count("；")
    inline = sum(read.count(c) for c in _CIRCLED)
    if ")" in read or "）" in read:
        inline += len(_INLINE_PARTS.findall(read))
    # Clauses: "sales wants X, finance fears Y, support expects Z" weighs as much as three sentences.
    commas = read.count(", ") + read.count(",\n") + read.count("，") + read.count("、")  # not 0,003 or 1,200
    parts = items + sequence + semicolons + inline + max(0, sentences - 1) + max(0, commas - _FREE_COMMAS)
    shape = [
        _plural(n, label)
        for n, label in (
            (items, "list item"),
            (sequence, "sequence word"),
            (semicolons, "semicolon"),
            (inline, "numbered part"),
            (sentences, "sentence"),
            (commas, "comma"),
        )
        if n and (label not in ("sentence", "comma") or n > {"sentence": 1, "comma": _FREE_COMMAS}[label])
    ]
    add("structure", parts, ", ".join(shape))

    extra: dict[str, list[str]] = {"decision": [], "stakes": [], "facts": [], "dilemma": []}
    if dilemma is not None:
        extra["dilemma"].append(f"yes/no question on what to do ({_shown([dilemma[:24]])})")
    if either:
        extra["decision"].append("either/or question")
    # Money is at stake, unless the ask is to work out an amount ("what do the parents pay in all?").
    if (_CURRENCY.search(read) or _AMOUNT.search(read)) and not terms.get("facts"):
        extra["stakes"].append("money")
    if ("%" in read or "％" in read or "百分之" in read) and _PERCENT.search(read):
        extra["facts"].append("percentages")
    if dilemma is not None:  # "should we" opened the dilemma: the same words are not a second decision
        terms["decision"] = {k: v for k, v in terms.get("decision", {}).items() if v not in dilemma}
    # A branch is the alternative its "what if" asks for: the branch factor counts it, the hats still see it.
    if ctx.branch_origin is not None:
        terms.pop("ideation", None)
    for name in SIGNALS:
        found = list(terms.get(name, {}).values()) + extra.get(name, [])
        if not found:
            continue
        count = len(found)
        if name == "stakeholders" and occurrences[name] > count:  # "sales wants.., finance wants.."
            count = occurrences[name]
            found[-1] += f" ({count} positions)"
        add(name, count, _shown(found))
        if name == "decision" and either:
            # options with something at stake, or with people whose lives they change ("the 7-year-old now or the
            # farmhand in 30 minutes?"), want a third angle
            at_stake = "stakes" in terms or extra["stakes"] or "risk" in terms or "people" in terms
            asks.append("either_stakes" if at_stake else "either")
        elif name == "planning" and any(terms.get(other) or extra.get(other) for other in _PLAN_AT_STAKE):
            asks.append("planning_stakes")  # a plan with people, stakes or risks in it: more than checkpoints
        elif name in FLOORS:
            asks.append(name)

    # A revision and a doubt want a critical review; a branch explores an alternative: what it could be, and gain.
    session: list[tuple[str, str]] = []
    if ctx.revised is not None:
        session.append(("revision", f"revises thought {ctx.revised[0]}"))
    if ctx.branch_origin is not None:
        session.append(("branch", f"branches from thought {ctx.branch_origin[0]}"))
    if ctx.confidence is not None and ctx.confidence < LOW_CONFIDENCE:
        session.append(("low_confidence", f"confidence {ctx.confidence:.2f}"))
    for name, detail in session:
        add(name, 1, detail)
        asks.append(name)
    caps: tuple[str, ...] = ()
    if dilemma is None and not _WEIGHING.intersection(asks):
        # The ask, not the situation around it, nor a question's lead-in ("Je prépare le conseil : quels élèves...?")
        ask_parts = [chunk.rpartition(": ")[2] for chunk in asked_chunks]
        user = "\n".join(ask_parts or chunks[:1] + chunks[-1:])
        user = _CHECK_WHETHER.sub(" ", user)
        signals = set(_signal_terms(user, vocabulary)[0])
        plain = pasted == 0 and words < _DOCUMENT_WORDS
        caps = _simple(read, chunks, asked_chunks, lang, signals, vocabulary if plain else None)
        if caps:  # "Next step: update the loading-bay planning": a plan named around a simple ask sets no floor
            asks = [ask for ask in asks if ask not in ("planning", "planning_stakes")]
    # A branch, a doubt or a call for ideas is worth a second angle; a third takes people or stakes in play.
    if not caps and dilemma is None and _SECOND_ANGLE.intersection(asks) and not _RAISED.intersection(asks):
        caps = () if any(counts.get(name) for name in _THIRD_ANGLE) else ("second_angle",)
    # A revision, a branch or a doubt reviews a step of the session: three angles at most, unless it asks to decide.
    if not caps and dilemma is None and _SESSION_STEP.intersection(asks):
        caps = ("session_step",)
    # "Log tail below. Is this just the memory limit, or something else?": a reading of the material, two angles.
    about_material = asks or any(_asks_what_is(chunk, lang) for chunk in asked_chunks)
    if not caps and dilemma is None and pasted and set(asks) <= {"either", "either_stakes"} and about_material:
        caps = ("pasted_question",)
        asks = ["either" if ask == "either_stakes" else ask for ask in asks]
    return Reading(counts, details, tuple(asks), pasted > 0, caps, "\n".join(asked_chunks), lang)


def _simple(
    read: str, chunks: list[str], asked: list[str], lang: str, weighed: set[str], vocabulary: _Vocabulary | None
) -> tuple[str, ...]:
    """The simple ask the thought makes, if any: a lookup or a sum asked with no decision in the question, or a
    next step stated with no question beyond a short confirmation ("That's it, right?"). In a document pasted as
    prose (a contract, a report) only its questions and its first sentence are taken for the user's words. In a
    short thought with nothing pasted (`vocabulary` given), a question naming stakes, risks or positions is no
    lookup."""
    lookup, request, how, step, relayed, opener = _simple_asks(lang)
    cjk = lang in _CJK_WORDS_PER_CHAR

    def short(chunk: str) -> bool:
        return len(chunk.strip()) <= _SHORT_ASK[1] if cjk else len(chunk.split()) <= _SHORT_ASK[0]

    if step.search(read) and all(short(chunk) for chunk in asked):
        # A next step may name the plan it carries out ("Prochaine étape : ..., puis mettre à jour le planning"),
        # when it opens a sentence or a clause ("帮我规划一下接下来 10 个月" plans the next ten months).
        opens = any(read[: m.start()].rstrip()[-1:] in _CLAUSE_MARKS for m in step.finditer(read))
        if weighed.isdisjoint(_WEIGHED) or (opens and weighed.isdisjoint(_WEIGHED - {"planning"})):
            return ("step",)
    # "Next on the discharge checklist: reconcile...", "Jetzt Kernel-Update einspielen, ...": a step opening a clause
    if (
        not asked
        and weighed.isdisjoint(_WEIGHED)
        and any(
            read[: m.start()].rstrip()[-1:] in _CLAUSE_MARKS and not _TOLD.match(read, m.end())
            for m in opener.finditer(read)
        )
    ):
        return ("step",)
    numbers = len(_NUMBERS.findall(read))
    # What the asker wants decides, not a plan told around it.
    sums = numbers >= _ENOUGH_NUMBERS
    passed_on = any(_relayed(chunk, (lookup, request, relayed), sums, lang) for chunk in chunks)
    if not asked and weighed.isdisjoint(_WEIGHED - {"planning"}) and passed_on:
        return ("lookup",)
    if not weighed.isdisjoint(_WEIGHED):  # the signals of the user's words (`read`, or a document's first lines)
        return ()

    for chunk in asked:
        # a request put as a question: "Can you list the flagged values?", "テーマを3つにまとめてくれる？"
        polite = _POLITE.sub("", chunk.strip(" \t\n-*•¿¡").rpartition(": ")[2])
        if (request.search(chunk) if cjk else request.match(polite)) is not None:
            return ("lookup",)
        # "Which of the two patients gets the last ICU bed?" weighs stakes, it looks nothing up; "How many years is
        # the limitation period for a lawsuit?" asks a number, whatever the stakes it names.
        choosing = {m.group() for m in lookup.finditer(chunk)} <= _CHOOSING | _BARE_WH
        at_stake = vocabulary is not None and not _signal_terms(chunk, vocabulary)[0].keys().isdisjoint(_AT_STAKE)
        if at_stake and choosing:
            continue
        if lookup.search(chunk) or (short(chunk) and numbers >= _ENOUGH_NUMBERS and not how.search(chunk)):
            return ("lookup",)
        # "Is apixaban taken once or twice a day?": a closed question a fact answers, naming no stakes
        question = chunk.strip().lstrip("¿¡ ").rpartition(": ")[2]
        if _fact_ask(lang).search(question) and _signal_terms(chunk, _vocabulary(lang))[0].keys().isdisjoint(_AT_STAKE):
            return ("lookup",)
    for chunk in (chunks if cjk else chunks[:2] + chunks[-1:]) if not asked else ():
        # an imperative opens it, or the part after its lead-in ("Pour le comité : liste-moi ...")
        found = request.search(chunk) if cjk else request.match(chunk.strip(" \t\n-*•¿¡→").rpartition(": ")[2])
        if found is not None:
            return ("lookup",)
    # An ask in the last sentence without a question mark ("total person-days of capacity, roughly", "La principale
    # veut le coût par élève."), by a lookup term other than a bare question word (a story says "who" and "when").
    last = chunks[-1].strip() if chunks else ""
    if not asked and any(m.group() not in _BARE_WH for m in lookup.finditer(last)) and not how.search(last):
        return ("lookup",)
    return ()


def _unquoted(chunk: str) -> str:
    """`chunk` without the quotations inside it; a quotation that ends it stays."""
    if not any(mark in chunk for mark in _QUOTE_MARKS):
        return chunk
    own = _QUOTED.sub(lambda m: m.group() if not chunk[m.end() :].strip(" .。") else " ", chunk)
    # a quotation the sentence split cut open ('开放题（“你最希望改进的是什么？' + '”，共 30 条'): its rest is quoted
    return _OPEN_QUOTE.sub(" ", own)


def _asks_what_is(chunk: str, lang: str) -> bool:
    """A question about what is true, whose "or" lists candidate answers (FACT_QUESTIONS)."""
    opener = chunk.strip().lstrip("¿¡ ").rpartition(": ")[2].lstrip("\"'“„«‘ ")
    # after a short lead-in: "In New York, how many days does a landlord have ...?"
    lead, comma, rest = opener.partition(", ")
    opened = [opener, rest] if comma and len(lead.split()) <= 4 else [opener]
    return any(_fact_question(lang).search(part) is not None for part in opened)


@cache
def _fact_question(lang: str) -> re.Pattern[str]:
    return re.compile(FACT_QUESTIONS[lang])


@cache
def _fact_ask(lang: str) -> re.Pattern[str]:
    return re.compile(FACT_ASKS[lang])


def _proposed(found: re.Match[str] | None, text: str) -> re.Match[str] | None:
    """`found`, unless it took a German noun for a verb: an infinitive proposing a course of action ("Paper
    zurückziehen?") is written in lower case, a noun ("Tropfen pro Minute?") is not."""
    verb = found.groupdict().get("inf") if found is not None else None
    if verb is not None and re.search(rf"(?<!\w){re.escape(verb)}(?!\w)", text) is None:
        return None
    return found


def _relayed(chunk: str, asks: tuple[re.Pattern[str], ...], sums: bool, lang: str) -> bool:
    """Someone's request passed on is simple when it asks for a fact or a sum ("Lena fragt, wie viele GB wir
    brauchen"), not a judgement ("fragt mich, ob sie die Richtige ist") nor a favour ("me demande de lui prêter")."""
    lookup, request, relayed = asks
    found = relayed.search(chunk)
    if found is None or not _signal_terms(chunk[found.end() :], _vocabulary(lang))[0].keys().isdisjoint(
        _AT_STAKE | _WEIGHED
    ):
        return False
    return sums or lookup.search(chunk, found.end()) is not None or request.search(chunk, found.end()) is not None
