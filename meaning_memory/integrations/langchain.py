"""A LangChain retriever (``langchain_core.retrievers.BaseRetriever``) that asks the engine's
search, as one agent (its token), and answers with ``Document``s (docs/frameworks.md).

Each hit is a ``Document`` in the engine's rank order: ``page_content`` is the memory's text,
``metadata`` holds ``mem_id``, ``rank``, ``score`` (the engine's: relevance × significance ×
age factor), ``relevance``, ``category``, ``memory_type``, ``created_at`` (ISO-8601),
``session``, ``thread``, ``source``, ``scope``, ``significance`` and the memory's own metadata
under ``metadata``. ``k`` (how many, at most the engine's ``MM_SEARCH_MAX_LIMIT``, 100 by
default) and the search's filters are fields, and each may be given again to one call
(``retriever.invoke("…", k=2, category="decision")``): ``metadata_filter`` (the metadata filter
of docs/metadata.md; ``metadata`` is LangChain's own field, for tracing), ``category``,
``memory_type``, ``session``, ``thread``, ``source``, and ``search_kwargs`` for any other search
argument (``as_of``, ``min_s_score`` …).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, SecretStr

from meaning_memory.client import AsyncMeaningMemory, MeaningMemory, SearchHit

__all__ = ["MeaningMemoryRetriever"]

#: The search's filters a retriever holds as fields, besides ``k`` and ``search_kwargs``.
FILTERS = ("metadata_filter", "category", "memory_type", "session", "thread", "source")


def _document(hit: SearchHit) -> Document:
    return Document(
        page_content=hit.text,
        id=hit.mem_id,
        metadata={
            "mem_id": hit.mem_id,
            "rank": hit.rank,
            "score": hit.explanation.score,
            "relevance": hit.explanation.relevance,
            "category": hit.category,
            "memory_type": hit.memory_type,
            "created_at": hit.created_at.isoformat(),
            "session": hit.session,
            "thread": hit.thread,
            "source": hit.source,
            "scope": hit.scope,
            "significance": hit.significance,
            "metadata": hit.metadata,
        },
    )


class MeaningMemoryRetriever(BaseRetriever):
    """The engine's search as a LangChain retriever.

    Give ``base_url`` and ``token`` (a client is opened for each call), or your own ``client``
    (``MeaningMemory``) and ``async_client`` (``AsyncMeaningMemory``), kept open by you.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_url: str | None = None
    token: SecretStr | None = None
    client: MeaningMemory | None = Field(default=None, exclude=True)
    async_client: AsyncMeaningMemory | None = Field(default=None, exclude=True)
    k: int = Field(default=4, ge=1)
    metadata_filter: dict[str, Any] | None = None
    category: str | None = None
    memory_type: str | None = None
    session: str | None = None
    thread: str | None = None
    source: str | None = None
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    timeout: float = 60.0

    def _arguments(self, given: dict[str, Any]) -> dict[str, Any]:
        """The search's arguments: the fields, with what this call gave instead."""
        unknown = set(given) - {"k", "search_kwargs", *FILTERS}
        if unknown:
            raise TypeError(
                f"{', '.join(sorted(unknown))}: not an argument of MeaningMemoryRetriever; "
                f"use k, {', '.join(FILTERS)} or search_kwargs."
            )
        k = given.get("k", self.k)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k: must be a whole number of at least 1 (got {k!r}).")
        arguments = {**self.search_kwargs, **given.get("search_kwargs", {}), "limit": k}
        for name in FILTERS:
            value = given.get(name, getattr(self, name))
            if value is not None:
                arguments["metadata" if name == "metadata_filter" else name] = value
        return arguments

    def _address(self) -> tuple[str, str]:
        if not self.base_url or self.token is None:
            raise ValueError(
                "base_url, token: MeaningMemoryRetriever needs both (or a client of its own)."
            )
        return self.base_url, self.token.get_secret_value()

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        arguments = self._arguments(kwargs)
        if self.client is not None:
            found = self.client.search(query, **arguments)
        else:
            url, token = self._address()
            with MeaningMemory(url, token, timeout=self.timeout) as client:
                found = client.search(query, **arguments)
        return [_document(hit) for hit in found]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        arguments = self._arguments(kwargs)
        if self.async_client is not None:
            found = await self.async_client.search(query, **arguments)
        else:
            url, token = self._address()
            async with AsyncMeaningMemory(url, token, timeout=self.timeout) as client:
                found = await client.search(query, **arguments)
        return [_document(hit) for hit in found]
