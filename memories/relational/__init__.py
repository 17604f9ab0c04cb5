"""Relational (R), below the layers: ``extraction`` (offline named-entity recognition) and
``gazetteer`` (names compared as people mean them). Entities and links are written by
``memories.services.relations``, read by ``memories.selectors.relations`` and
``memories.selectors.traversal``, and filter a search in ``memories.search.relational``."""
