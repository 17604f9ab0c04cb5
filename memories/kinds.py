"""The types of entities and of links, and the perspectives and kinds of source of a memory
(plain values: the settings' rules read them too)."""

#: The types of entities, besides ``custom:<name>`` (see ``memories.rules.entity_type``).
ENTITY_TYPES = ("person", "organization", "customer", "project", "product", "place", "topic")
#: Types that name one kind of thing: a customer is an organisation. Two entities of one name
#: are namesakes (two things) only when their types are of different kinds; any other type,
#: ``custom:<name>`` too, is a kind of its own.
ENTITY_TYPE_KINDS = {"customer": "organization"}
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
#: Which way a link points, seen from the memory or node it is shown with.
LINK_DIRECTIONS = ("out", "in")
#: Which links a walk follows: those from each node, those to it, or both.
WALK_DIRECTIONS = (*LINK_DIRECTIONS, "both")
#: The link types the engine derives from memories' own fields: nobody writes them as links.
DERIVED_LINK_TYPES = ("supersedes", "follows")
CUSTOM_TYPE_PREFIX = "custom:"
#: Whom a memory is for, besides ``custom:<name>``: the agent that wrote it, the person it
#: works for, the team sharing the scope, someone outside (a customer, a partner).
PERSPECTIVES = ("self", "user", "team", "external")
#: How a memory's claim reached its writer: first-hand, someone said it, a tool's output, the
#: agent concluded it, reported second-hand.
SOURCE_KINDS = ("observed", "stated", "tool", "inferred", "hearsay")
