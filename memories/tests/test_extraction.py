"""The offline entity recognition: the pinned model, what it finds, and a process that reads
text after text without growing."""

import pytest

from memories.relational import extraction
from memories.relational.extraction import ExtractionError, Recognizer, extract, get_recognizer


def test_it_finds_people_organisations_and_places():
    (spans,) = extract(["Melanie met the Zephyr Logistics team in Boston on Tuesday."])
    found = {(s.text, s.entity_type) for s in spans}
    assert ("Melanie", "person") in found and ("Boston", "place") in found
    assert ("Zephyr Logistics", "organization") in found
    assert not [s for s in spans if s.label == "DATE"]  # dates are not entities here


def test_switched_off_it_reads_nothing(settings):
    settings.MM_ENTITY_EXTRACTION = False
    assert extract(["Melanie met Caroline in Boston."]) == [[]]


def test_another_build_of_the_model_is_refused(monkeypatch):
    monkeypatch.setattr(extraction, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ExtractionError, match="not the one this engine was built for"):
        Recognizer()


def test_new_words_do_not_stay_in_the_vocabulary():
    """Without a memory zone every word a text brings stays in the model's string store, and a
    served engine grows with each text it reads."""
    strings = get_recognizer().nlp.vocab.strings
    extract(["A first text, so that the model is loaded."])
    before = len(strings)
    extract([f"Zephyr{n} met Melanie{n} and Kwame{n} in Lisbon{n}." for n in range(300)])
    assert len(strings) == before
