"""The words the router reads by, per language: the term tables of `terms` compiled into patterns (whole
words in Latin scripts, anywhere in Chinese and Japanese, accents optional, shared prefixes factored into one
alternation), the language of a text, and the signal terms a text holds. `reading` asks; nothing here decides.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cache

from .terms import (
    CORRELATIVES,
    DECISION_QUESTIONS,
    DOUBT_TERMS,
    FACT_ASKS,
    FACT_QUESTIONS,
    HOW_TERMS,
    LETTERS,
    LOOKUP_TERMS,
    OPTION_COUNTS,
    OR_AMOUNT,
    OR_TERMS,
    POSSIBILITY_TERMS,
    RELAYED_TERMS,
    REQUEST_TERMS,
    SEQUENCE_TERMS,
    SIGNAL_TERMS,
    STEP_OPENERS,
    STEP_TERMS,
    STOPWORDS,
    WHETHER,
)

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_ASCII_LETTERS = re.compile(r"[A-Za-z]")
_LETTERS = re.compile(r"[^\W\d_]+")
# Japanese "A か B か": "続けるか、集約するか。" or "PostgreSQLかMongoDBか、"; not "何か月で…されますか？".
_JA_EITHER = re.compile(r"か[、，,][^。？?\s]{1,40}か(?:[。？?を で]|どう|迷|$)|か[^。？?\s、]{1,20}か[、，,]")
_Node = dict[str, "_Node"]


def _variants(term: str) -> list[str]:
    """The term as written, and without its accents (unless marked `!`)."""
    if term.startswith("!"):
        return [term[1:]]
    if CJK.search(term):  # kana decompose too (ず = す + ゙): stripping would make other words
        return [term]
    plain = "".join(c for c in unicodedata.normalize("NFD", term) if not unicodedata.combining(c))
    plain = plain.replace("ß", "ss")
    return [term] if plain == term else [term, plain]


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
class Vocabulary:
    words: re.Pattern[str]  # whole-word terms (Latin scripts), English always included
    inside: re.Pattern[str] | None  # terms matched anywhere: Chinese, Japanese, German compound endings
    signal_of: dict[str, str]  # matched term (or its stem) -> signal name
    stems: tuple[int, ...]  # lengths of the stems, longest first
    either: re.Pattern[str]  # the words for "or"
    dilemma: re.Pattern[str]  # how a yes/no question about what to do opens


@cache
def vocabulary_for(lang: str) -> Vocabulary:
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
                (inside if infix or (cjk and CJK.search(term)) else words).append(term)
            if infix:
                words.append(raw)  # the word on its own, too
    either = [t.strip() for code in codes for t in OR_TERMS[code].split(",")]
    spaced = [t for t in either if not CJK.search(t)]
    amounts = [v for code in codes for t in OR_AMOUNT[code].split(",") for v in _variants(t.strip())]
    # "502 or 504", "v2 or v3": which value is a fact to look up, not options to weigh
    either_re = (
        r"(?<!\d )(?<![\w-])(?:" + "|".join(spaced) + r")(?![\w-])(?!\s+(?:" + "|".join(amounts) + r")(?![\w-]))(?! \d)"
    )
    if cjk:
        either_re += "|" + "|".join(t for t in either if CJK.search(t))
        either_re += "|" + _JA_EITHER.pattern if lang == "ja" else ""
    return Vocabulary(
        words=re.compile(r"(?<![\w-])" + _trie(words) + r"(?![\w-])"),
        inside=re.compile(_trie(inside)) if inside else None,
        signal_of=signal_of,
        stems=tuple(sorted(stems, reverse=True)),
        either=re.compile(either_re),
        dilemma=re.compile(DECISION_QUESTIONS[lang]),
    )


def terms_pattern(table: dict[str, str], lang: str) -> re.Pattern[str]:
    """The terms of `lang` (and English), whole words in Latin scripts, anywhere in Chinese and Japanese."""
    codes = ("en",) if lang == "en" else (lang, "en")
    terms = [v for code in codes for term in table[code].split(",") if term.strip() for v in _variants(term.strip())]
    spaced = [t for t in terms if not CJK.search(t)]
    pattern = r"(?<![\w-])" + _trie(spaced) + r"(?![\w-])"
    if lang in ("zh", "ja"):
        pattern += "|" + _trie([t for t in terms if CJK.search(t)])
    return re.compile(pattern)


@cache
def simple_asks(lang: str) -> tuple[re.Pattern[str], ...]:
    """How a lookup is asked, requested, a short question asks how to act, and a next step is stated."""
    tables = (LOOKUP_TERMS, REQUEST_TERMS, HOW_TERMS, STEP_TERMS, RELAYED_TERMS, STEP_OPENERS)
    return tuple(terms_pattern(table, lang) for table in tables)


@cache
def stated_markers(lang: str) -> tuple[re.Pattern[str], ...]:
    """How options, hypotheses and doubts are stated: possibility words, doubt words, options counted, paired
    "either ... or" words (terms.POSSIBILITY_TERMS and the tables after it)."""
    return (
        terms_pattern(POSSIBILITY_TERMS, lang),
        terms_pattern(DOUBT_TERMS, lang),
        re.compile(OPTION_COUNTS[lang]),
        re.compile(CORRELATIVES[lang]),
    )


@cache
def whether(lang: str) -> re.Pattern[str]:
    return re.compile(WHETHER[lang])


@cache
def _stopwords() -> dict[str, str]:
    """Each frequent word and its language (a word frequent in two of them tells nothing, so it is left out)."""
    seen: dict[str, list[str]] = {}
    for lang, words in STOPWORDS.items():
        for word in words.split():
            seen.setdefault(word, []).append(lang)
    return {word: langs[0] for word, langs in seen.items() if len(langs) == 1}


def language_of(text: str) -> str:
    """The language of the prose: by script for Chinese and Japanese, by frequent words for the rest."""
    head = text[:500]
    cjk = len(CJK.findall(head))
    # Written in Chinese or Japanese: most of the text, or the opening line (the user's words, before an English
    # log or trace pasted in prose).
    opening = head.lstrip().partition("\n")[0]
    opened = len(CJK.findall(opening))
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


def signal_terms(text: str, vocabulary: Vocabulary) -> tuple[dict[str, dict[str, str]], Counter[str]]:
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


@cache
def fact_question(lang: str) -> re.Pattern[str]:
    return re.compile(FACT_QUESTIONS[lang])


@cache
def fact_ask(lang: str) -> re.Pattern[str]:
    return re.compile(FACT_ASKS[lang])
