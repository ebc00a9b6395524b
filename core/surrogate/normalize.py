"""Normalise short answers so that trivially different spellings compare equal.

Used by the `exact` backend as its equivalence test, and by every backend to
deduplicate strings before any model call.

The rules, applied in this order:

1. Unicode NFKC and case folding ("Paris" == "PARIS", full-width digits == digits).
2. Numbers are rewritten to one canonical decimal form: thousands separators
   dropped ("1,000" == "1000"), trailing zeros dropped ("18.0" == "18",
   "2.50" == "2.5"), a leading minus kept ("-3"). Currency signs and percent
   signs are dropped ("$18" == "18", "-$5" == "-5", "50%" == "50").
3. Outside numbers, apostrophes and full stops are deleted ("don't" == "dont",
   "U.S.A." == "USA") and every other punctuation or symbol character (Unicode
   categories P* and S*) becomes a space ("paris!" == "paris").
4. The English articles "a", "an" and "the" are removed as whole words.
5. Runs of whitespace become one space; leading and trailing space is dropped.

Rules 3 to 5 follow the answer normalisation of the SQuAD evaluation script
(Rajpurkar et al. 2016), except that punctuation other than apostrophes and
full stops becomes a space rather than nothing, so "1,2,3" does not become "123".
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import lru_cache

# A number not glued to a preceding digit, dot or comma: optional minus, optional
# currency sign, digits with optional thousands groups, optional decimals (or just ".5").
_CURRENCY = "$€£¥"
_NUMBER = re.compile(rf"(?<![\d.,])(-?[{_CURRENCY}]?(?:(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?|\.\d+))(?![\d])")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_DELETED = str.maketrans("", "", "'\u2019\u2018`.")


def canonical_number(text: str) -> str:
    """Canonical decimal form of a number written with optional currency sign and thousands commas.

    canonical_number("1,000.50") == "1000.5"; canonical_number("-$5") == "-5"; canonical_number("-0.0") == "0".
    """
    try:
        value = Decimal(text.replace(",", "").translate(str.maketrans("", "", _CURRENCY)))
    except InvalidOperation:  # the regex only hands over valid numbers; keep text otherwise
        return text
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def _strip_symbols(text: str) -> str:
    """Delete apostrophes and full stops; every other punctuation or symbol character becomes a space."""
    text = text.translate(_DELETED)
    return "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)


MAX_PASSES = 4
"""The rules are applied again until the text no longer changes: one pass can leave a number to a later
one (",00" -> "00", a number once its comma is gone, -> "0"); a normal form must be its own normal form."""


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """The normalised form of an answer (see the module docstring for the rules), a fixed point of them."""
    for _ in range(MAX_PASSES):
        once = _one_pass(text)
        if once == text:
            break
        text = once
    return text


def _one_pass(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    parts = _NUMBER.split(text)
    # re.split with one capturing group: even positions are text, odd are numbers.
    pieces = [canonical_number(part) if i % 2 else _strip_symbols(part) for i, part in enumerate(parts)]
    text = " ".join(pieces)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())
