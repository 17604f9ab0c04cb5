"""Divergence (R): whether two memories about the same thing disagree. ``detectors`` are the
rules and the geometry, cheapest first; ``model`` the optional remote judge. The opt-in scan
that flags pairs, and a curator's decision on them, are ``memories.services.divergence``; the
reads are ``memories.selectors.divergences``."""
