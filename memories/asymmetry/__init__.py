"""Asymmetry (A): how far a memory's claim can be trusted. ``cues`` reads where a claim came
from in its own words (who said it, first-hand or hearsay); ``score`` turns a source's record
and the claim's clarity into the A score. The writes that give it are
``memories.services.asymmetry``; a source's record is read by ``memories.selectors.sources``."""
