"""How a search is put together, as one typed value: its candidate sources, how their signals
are fused, what re-orders the candidates after the ranking statement, the gate and the score.

The default recipe is read from the settings (``Recipe.default``); the benchmarks' methods are
recipes too (``Recipe.default().but(...)``), so a method row and the engine run the same code.
Each piece is a small builder: the statement's (``memories.search.statement``) and the
re-orderings after it (``memories.search.learned``, ``memories.search.graph``,
``memories.search.sessions``). Every hit's explanation names the pieces that placed it
(``SearchHit.explanation``: ``pieces``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings

#: The candidate sources, in the order a hit's explanation names them: the nearest by cosine
#: distance, the best by keyword rank, and the turns just before and after the strongest of
#: those two lists in their session (``memories.search.statement.time_neighbour_source``).
SOURCES = ("vector", "keyword", "time_neighbours")
#: What gives each candidate its relevance: the statement's fused signals, or the learned
#: model over them (``memories.search.learned``).
RELEVANCE = ("formula", "learned")


@dataclass(frozen=True)
class Recipe:
    #: Candidate sources, some of ``SOURCES`` ("vector" and "keyword" always).
    sources: tuple[str, ...] = ("vector", "keyword")
    #: The length of the vector list and of the keyword list (at least the search's limit).
    candidates: int = 50
    #: Fusion: the keyword rank's weight against similarity, the episode vector's weight.
    keyword_weight: float = 0.6
    episode_vector_weight: float = 0.25
    #: The share of the best fused figure next to a candidate in its session it gets.
    neighbour_weight: float = 0.3
    #: With "time_neighbours": how many of the strongest of each list bring their neighbours.
    time_neighbour_seeds: int = 5
    relevance: str = "formula"
    #: ``expand: "graph"``: the walk over the links among the candidates.
    graph: bool = False
    #: At most this many of a session's memories before any other session's next one; 0: no cap.
    session_cap: int = 0
    gate_k: int = 20
    gate_ratio: float = 0.8
    half_life_days: float = 90.0
    asymmetry: bool = False

    def __post_init__(self) -> None:
        if not {"vector", "keyword"} <= set(self.sources) <= set(SOURCES):
            raise ValueError(f"a recipe's sources are vector, keyword and some of {SOURCES}")
        if self.relevance not in RELEVANCE:
            raise ValueError(f"a recipe's relevance is one of {RELEVANCE}")
        if self.candidates < 1 or self.time_neighbour_seeds < 1 or self.session_cap < 0:
            raise ValueError("a recipe's candidates and seeds are positive, its cap not negative")

    @classmethod
    def default(cls) -> Recipe:
        """The recipe the settings describe (docs/configuration.md)."""
        seeds = int(settings.MM_SEARCH_TIME_NEIGHBOURS)
        return cls(
            sources=("vector", "keyword", "time_neighbours") if seeds else ("vector", "keyword"),
            candidates=int(settings.MM_SEARCH_CANDIDATES),
            keyword_weight=float(settings.MM_SEARCH_KEYWORD_WEIGHT),
            episode_vector_weight=float(settings.MM_SEARCH_EPISODE_VECTOR_WEIGHT),
            neighbour_weight=float(settings.MM_SEARCH_NEIGHBOUR_WEIGHT),
            time_neighbour_seeds=seeds or cls.time_neighbour_seeds,
            relevance="learned" if settings.MM_SEARCH_LEARNED else "formula",
            session_cap=int(settings.MM_SEARCH_SESSION_CAP),
            gate_k=int(settings.MM_SEARCH_GATE_K),
            gate_ratio=float(settings.MM_SEARCH_GATE_RATIO),
            half_life_days=float(settings.MM_S1_HALF_LIFE_DAYS),
            asymmetry=bool(settings.MM_ASYMMETRY_RANKING),
        )

    def but(self, **changes) -> Recipe:
        """This recipe with ``changes`` (checked as a new one is)."""
        return replace(self, **changes)

    @property
    def reorders(self) -> bool:
        """Whether anything re-orders the candidates after the statement, which then returns
        every candidate rather than the first ``limit``."""
        return self.relevance == "learned" or self.graph or self.session_cap > 0

    def placed_by(self) -> list[str]:
        """The pieces after the sources that placed every hit, in the order they ran."""
        pieces = ["fusion", "neighbour"]
        if self.relevance == "learned":
            pieces.append("learned")
        if self.graph:
            pieces.append("graph")
        pieces += ["gate", "score"]
        if self.session_cap:
            pieces.append("session_cap")
        return pieces
