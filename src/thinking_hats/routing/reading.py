"""What the router reads in a thought, before any weight: `reading(ctx)` counts, factor by factor, what the
thought holds (words, questions, parts, each signal's distinct terms), what it asks (the floors' asks) and whether
the ask is simple (the ceilings' caps). `router` weighs a reading into a score and hats.

Any of the languages in `terms`: the structure (sentences, questions, parts, options) is read from
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
from dataclasses import dataclass

from ..analysis import ThoughtContext
from .terms import (
    WHETHER,
)
from .vocabulary import (
    Vocabulary,
    fact_ask,
    fact_question,
    language_of,
    signal_terms,
    simple_asks,
    stated_markers,
    vocabulary_for,
    whether,
)
from .weights import FLOORS

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
_SECOND_ANGLE = frozenset(("branch", "low_confidence", "ideation", "stated", "revision"))
_RAISED = frozenset(("either_stakes", "planning_stakes"))  # asks that already want a third angle
_THIRD_ANGLE = ("stakes", "people", "stakeholders")
_PURPOSE_ASKS = frozenset(("hypothesis", "exploration", "decision"))  # crash purposes that weigh rivals
_STRONG_THIRD = frozenset(("stated", "ideation", "low_confidence"))
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
_ZH_ASKS = re.compile(r"要不要|该不该|([^\W是有对好能会行])不\1\w{0,2}[。\s]*$")
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
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
_ASCII_WORD = re.compile(r"[A-Za-z0-9][\w.+-]*")
_CURRENCY = re.compile(r"[$€£¥₹]\s?\d")
_AMOUNT = re.compile(
    # ("2.4M rows" counts rows, not money)
    r"\d(?:[\d.,]*\d)?\s?(?:(?:k|m|bn)(?!\s+(?:rows|records|users|requests|events|lines|entries|items|files|"
    r"messages|calls|tokens|documents|visits|views|downloads|hits))|mio\.?|mrd\.?|million\w*|millones|milhões|"
    r"milliard\w*|billion\w*|bilhões|mil millones|万|亿|億|万円|元|円|euros?|dollars?|usd|eur|reais|r\$)(?!\w)",
)
_PERCENT = re.compile(r"\d\s?[%％]|百分之")


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
        return frozenset(signal_terms(self.asked, vocabulary_for(self.lang))[0]) if self.asked else frozenset()


def reading(ctx: ThoughtContext) -> Reading:
    """Count what the thought holds, factor by factor; `route` weighs it (and the training script fits it)."""
    text = ctx.thought
    if len(text) > _READ:  # cut at line ends, so that a pasted line is not taken for prose by losing its start
        start, end = text[:_READ_HEAD], text[_READ_HEAD - _READ :]
        text = start[: start.rfind("\n") + 1 or None] + "\n" + end[end.find("\n") + 1 :]
    prose, pasted, listed = _prose(text)
    lang = language_of(prose[:500].lower())
    cjk = lang in _CJK_WORDS_PER_CHAR
    window, head = _WINDOW["cjk" if cjk else "latin"]
    read = prose if len(prose) <= window else prose[:head] + "\n\n" + prose[head - window :]
    read = read.lower().replace("’", "'")
    vocabulary = vocabulary_for(lang)
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
    unmarked_ask = False
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
        unmarked = number == len(chunks) - 1 and (
            (lang in _UNMARKED_QUESTIONS and chunk.rstrip()[-1:].isalnum())
            # "整条线下门店业务要不要砍掉。": a Chinese yes/no on what to do asks with or without its mark (not a step
            # that decides later, "再决定要不要...")
            or (lang == "zh" and _ZH_ASKS.search(chunk) is not None and "再" not in chunk and "看" not in chunk)
        )
        if asked:
            questions += 1
            asked_chunks.append(chunk)
        if dilemma is None and lang in WHETHER and (weighed := whether(lang).search(chunk)) is not None:
            dilemma = weighed.group()[-12:]
        unmarked_ask = unmarked_ask or unmarked
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
                # a course of action named first makes "or ..." its alternative ("Evacuate the care home tonight, or
                # shelter in place?", "Stop the line or not?")
                acting = opened is not None and bool({"verb", "act"} & {k for k, v in opened.groupdict().items() if v})
                if opened is not None and offers and not acting and not _YES_OR_NO.search(opener):
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
        either = any(signal_terms(chunk, vocabulary)[0].get("decision") for chunk in asked_chunks)
    terms, occurrences = signal_terms(read, vocabulary)
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

    told = not asked_chunks and not unmarked_ask and dilemma is None
    raised = _raises(terms, counts)
    # Options, hypotheses or a doubt stated without a question are an ask for a second angle (round 9).
    # (In a document pasted as prose around a question, its "either party may ..." are the document's, not the ask.)
    # (In a document pasted as prose, only its first and last sentences are the writer's own words.)
    in_own_words = not asked_chunks or words < _DOCUMENT_WORDS
    own_chunks = chunks if words < _DOCUMENT_WORDS else chunks[:2] + chunks[-2:]
    weighs_already = either or dilemma is not None
    stated = _stated(own_chunks, asked_chunks, lang, vocabulary) if in_own_words and not weighs_already else None
    # A crash step's purpose says what it weighs: a hypothesis or an exploration holds rivals, a decision options.
    purpose = (ctx.purpose or "").strip().lower()
    if stated is None and not weighs_already and purpose in _PURPOSE_ASKS:
        stated = f"purpose: {purpose}"
    if stated is not None:
        add("options", 1, stated)
        asks.append("stated")
        if not raised:  # a plan with its options told is a plan with a real choice: two angles, not three
            asks = ["planning" if ask == "planning_stakes" else ask for ask in asks]
    # A plan told in order ("first ..., then ..., finally ...") with nothing asked is the plan made, not one to weigh.
    elif told and sequence + items >= 2 and not raised:
        asks = [ask for ask in asks if ask not in ("planning", "planning_stakes")]
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
        signals = set(signal_terms(user, vocabulary)[0])
        plain = pasted == 0 and words < _DOCUMENT_WORDS
        caps = _simple(read, chunks, asked_chunks, lang, signals, vocabulary if plain else None)
        if caps:  # "Next step: update the loading-bay planning": a plan named around a simple ask sets no floor
            asks = [ask for ask in asks if ask not in ("planning", "planning_stakes")]
        # A question asked for a fact or a sum is answered as such, whatever its lead-in weighs; a statement of
        # options or a doubt ("... I'm not sure which yet") or a next step with one in it is more than a lookup.
        if caps == ("lookup",) and "stated" in asks and asked_chunks:
            asks.remove("stated")
            del counts["options"], details["options"]
        elif "stated" in asks:
            caps = ()
    # "Que feriez-vous ?", "What should she do first?": a question on what to do is a second angle however short
    # (round 9: length no longer carries it there).
    if not caps and dilemma is None and not either and not asks and _asks_to_weigh(asked_chunks, vocabulary):
        asks.append("weigh")
    # A branch, a doubt or a call for ideas is worth a second angle; a third takes people or stakes in play.
    if not caps and dilemma is None and _SECOND_ANGLE.intersection(asks) and not _RAISED.intersection(asks):
        # (ideas and stated options take serious stakes or parties at odds; a word about people is enough elsewhere)
        third = raised or (
            not _SECOND_ANGLE.intersection(asks) <= _STRONG_THIRD and any(counts.get(n) for n in _THIRD_ANGLE)
        )
        caps = () if third else ("second_angle",)
    # A step told, asking nothing and weighing nothing (progress, a check, a conclusion, a sum worked out), stays one
    # hat however long and detailed, unless it raises serious stakes or several parties (round 9).
    if not caps and told and not asks and not counts.get("decision") and not raised:
        caps = ("told",)
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
    read: str, chunks: list[str], asked: list[str], lang: str, weighed: set[str], vocabulary: Vocabulary | None
) -> tuple[str, ...]:
    """The simple ask the thought makes, if any: a lookup or a sum asked with no decision in the question, or a
    next step stated with no question beyond a short confirmation ("That's it, right?"). In a document pasted as
    prose (a contract, a report) only its questions and its first sentence are taken for the user's words. In a
    short thought with nothing pasted (`vocabulary` given), a question naming stakes, risks or positions is no
    lookup."""
    lookup, request, how, step, relayed, opener = simple_asks(lang)
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
        named = signal_terms(chunk, vocabulary_for(lang))[0].keys()  # the question's own signals, read once
        at_stake = vocabulary is not None and not named.isdisjoint(_AT_STAKE)
        if at_stake and choosing:
            continue
        if lookup.search(chunk) or (short(chunk) and numbers >= _ENOUGH_NUMBERS and not how.search(chunk)):
            return ("lookup",)
        # "Is apixaban taken once or twice a day?": a closed question a fact answers, naming no stakes
        question = chunk.strip().lstrip("¿¡ ").rpartition(": ")[2]
        if fact_ask(lang).search(question) and named.isdisjoint(_AT_STAKE):
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


def _asks_to_weigh(asked: list[str], vocabulary: Vocabulary) -> bool:
    return any("decision" in signal_terms(chunk, vocabulary)[0] for chunk in asked)


def _offers(chunk: str, start: int, vocabulary: Vocabulary) -> bool:
    """An "or" after `start` that joins options, not amounts ("one or two units", "zwei oder drei Tage")."""
    return any(
        _NUMBER_WORD.search(chunk, max(0, m.start() - 12), m.start()) is None
        for m in vocabulary.either.finditer(chunk, start)
    )


_NUMBER_WORD = re.compile(
    r"(?<!\w)(?:one|two|three|four|five|ein|eine|einen|zwei|drei|vier|uno|una|un|dos|tres|cuatro|une|deux|trois|"
    r"quatre|um|uma|dois|duas|três|quatro|\d+)\s*$"
)
_LEAD_IN = re.compile(r"[:：]\s")
_LETTERED = re.compile(r"(?:\(a\)|(?<!\w)a\))[^\n]{1,400}?(?:\(b\)|(?<!\w)b\))|[(（]1[)）][^\n]{1,400}?[(（]2[)）]")


_CJK_LETTERED = re.compile(r"[：:]\s*a\s*[^；;。]{1,200}[；;]\s*b\s")  # "两个候选人：a 技术更强…；b 沟通好"
# (a Chinese "A 还是 B" asks which, unless it joins two clauses: "是花 20 万买回来，还是申请无效宣告")
_CJK_QUESTION = re.compile(r"[吗呢][，,\s]|(?<![，,])还是|でしょうか|ですか")
_COUNT_WORDS = ("million", "billion", "millon", "milhõ", "milho", "bilhõ", "bilho", "milliard", "mio", "mrd")


def _raises(terms: dict[str, dict[str, str]], counts: dict[str, int]) -> bool:
    """Serious stakes or several parties with positions: what lifts a told step above one hat (round 9)."""
    parties = counts.get("stakeholders", 0)
    people = counts.get("people", 0)
    # "5.5 billion entries": a count, not money at stake
    stakes = [term for term in terms.get("stakes", {}) if not term.startswith(_COUNT_WORDS)]
    money = bool(counts.get("stakes"))  # an amount of money, or a stakes term
    return parties >= 2 or (bool(stakes) and bool(parties or people)) or (parties >= 1 and (money or people >= 2))


def _stated(chunks: list[str], asked: list[str], lang: str, vocabulary: Vocabulary) -> str | None:
    """What the thought states to weigh without asking (round 9), read by structure in its statements: a doubt in
    the writer's voice ("I can't tell yet"), options counted ("two ways to ship"), paired words ("either ... or",
    "soit ... soit"), a possibility and then an "or" in one sentence ("we could batch it, or stream it"), or two
    possibilities in one thought ("it might be the retry policy; it could also be DNS"). None if nothing is."""
    possible, doubt, counted, paired = stated_markers(lang)
    told = [_CHECK_WHETHER.sub(" ", chunk) for chunk in chunks if chunk not in asked]
    if (found := doubt.search("\n".join(told))) is not None:
        return f"a doubt ({found.group()})"
    # (a question typed without its mark offers no options: "…叫啥来着，transaction_isolation 还是 tx_isolation")
    told = [chunk for chunk in told if not _asks_what_is(chunk, lang) and not _CJK_QUESTION.search(chunk)]
    if not told:
        return None
    text = "\n".join(told)
    lettered = _LETTERED.search(text) or (_CJK_LETTERED.search(text) if lang in ("zh", "ja") else None)
    if (found := counted.search(text) or lettered) is not None:
        return f"options ({_shown([found.group()[:24]])})"
    # "Take the acquisition offer or raise the Series B.": one sentence offering two courses, asked or not
    if len(told) == 1 and _offers(told[0], 0, vocabulary):
        return "options (... or ...)"
    for chunk in told:
        if (found := paired.search(chunk)) is not None:
            return f"options ({_shown([found.group()[:24]])})"
        # "we could batch it nightly, or stream it"; "Offline mode: drafts on the device, or all on the server"
        found = possible.search(chunk) or _LEAD_IN.search(chunk)
        if found is not None and _offers(chunk, found.end(), vocabulary):
            return f"options ({found.group().strip()} ... or)"
    possibilities = possible.findall(text)
    if len(possibilities) >= 2:
        return f"hypotheses ({_shown(possibilities)})"
    return None


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
    return any(fact_question(lang).search(part) is not None for part in opened)


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
    if found is None or not signal_terms(chunk[found.end() :], vocabulary_for(lang))[0].keys().isdisjoint(
        _AT_STAKE | _WEIGHED
    ):
        return False
    return sums or lookup.search(chunk, found.end()) is not None or request.search(chunk, found.end()) is not None
