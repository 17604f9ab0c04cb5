"""The types of entities and of links (plain values: the settings' rules read them too)."""

#: The types of entities, besides ``custom:<name>`` (see ``memories.rules.entity_type``).
ENTITY_TYPES = ("person", "organization", "customer", "project", "product", "place", "topic")
#: The types of links, besides ``custom:<name>``. ``supersedes`` and ``follows`` are read from
#: the memories themselves (``superseded_by``, ``follows``): no link row repeats them.
LINK_TYPES = (
    "mentions",
    "relates_to",
    "supports",
    "contradicts",
    "supersedes",
    "part_of",
    "derived_from",
    "follows",
    "same_as",
)
#: The link types the engine derives from memories' own fields: nobody writes them as links.
DERIVED_LINK_TYPES = ("supersedes", "follows")
CUSTOM_TYPE_PREFIX = "custom:"
