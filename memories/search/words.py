"""A query's words: the query's lexemes (with a team member's scopes, in one round trip),
and the tsqueries keyword rank and keyword candidates use."""

from __future__ import annotations

from memories import rules
from memories.errors import Errors
from memories.models import TEXT_SEARCH_CONFIG
from memories.prepared import prepared_cursor
from memories.reading import reader as database
from memories.search.statistics import common_words
from memories.selectors.reader import Reader
from memories.selectors.visibility import WORKSPACE_SCOPE_IDS_SQL


def tsquery(words: list[str]) -> str | None:
    """The words OR-ed, as tsquery text (None for no words). Passed as a constant, not built in
    SQL, so that the planner can estimate from its statistics how many memories match it."""
    if not words:
        return None
    return " | ".join("'" + word.replace("\\", "\\\\").replace("'", "''") + "'" for word in words)


def scopes_and_words(reader: Reader, query: str) -> tuple[list[int], list[str]]:
    """The scope ids ``reader`` sees (an agent's, or the whole workspace's) and the query's
    words (stemmed, without stop words), in one round trip: every search needs both before
    its statement can be written."""
    with prepared_cursor(database) as cursor:
        if reader.scope_ids is not None:
            cursor.execute(
                f"SELECT NULL, ARRAY(SELECT DISTINCT lexeme "
                f"FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)) ORDER BY lexeme)",
                [query],
            )
        else:
            cursor.execute(
                f"SELECT ARRAY({WORKSPACE_SCOPE_IDS_SQL}), ARRAY(SELECT DISTINCT lexeme "
                f"FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)) ORDER BY lexeme)",
                [reader.workspace_id, query],
            )
        scope_ids, words = cursor.fetchone()
    errors = Errors()
    errors.check("query", rules.query_words(len(words)))
    errors.raise_if_any()
    return (reader.scope_list if reader.scope_ids is not None else scope_ids), words


def keyword_lexemes(words: list[str], workspace_id: int) -> tuple[list[str], list[str]]:
    """The words keyword rank is computed with (all of them) and the words keyword candidates
    must contain: those not common in the workspace (see ``common_words``) or, if every word
    is common, the least common one alone."""
    common = common_words(workspace_id)
    matched = [word for word in words if word not in common]
    if not matched and words:
        matched = [min(words, key=lambda word: (common[word], word))]
    return words, matched


def keyword_queries(query: str, reader: Reader) -> tuple[str | None, str | None]:
    """The two tsqueries a search for ``query`` by ``reader`` uses: the one keyword rank is
    computed with and the one keyword candidates must match (see ``keyword_lexemes``)."""
    _, words = scopes_and_words(reader, query)
    with database.cursor() as cursor:
        cursor.execute(
            "SELECT %s::tsquery::text, %s::tsquery::text",
            [tsquery(lexemes) for lexemes in keyword_lexemes(words, reader.workspace_id)],
        )
        return cursor.fetchone()
