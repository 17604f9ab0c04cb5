"""The rules read around the model's names: numbers, headlines and datelines
(``memories.relational.layout``), titles, first names, common words and surnames
(``memories.relational.people``). Spans are given by hand: the rules, not the model, are tested."""

from memories.models import Entity
from memories.operations import memory_remember
from memories.relational.extraction import LABEL_TYPES, Span
from memories.relational.layout import read_layout
from memories.relational.people import read_roles, read_surnames, surname
from memories.relational.spans import clean
from memories.services.relations.recognition import known_surnames


def span(text: str, name: str, label: str) -> Span:
    start = text.index(name)
    return Span(start, start + len(name), name, label, LABEL_TYPES[label])


def names(found: list[Span]) -> list[tuple[str, str]]:
    return [(s.text, s.entity_type) for s in found]


def test_a_score_or_a_date_is_cut_off_a_name():
    text = "Romania beat Lithuania 3-0 in a qualifier ."
    assert names(read_layout(text, [span(text, "Lithuania 3-0", "GPE")])) == [
        ("Lithuania", "place")
    ]
    text = "Somerset 83 and 174 , Leicestershire 296 ."
    assert names(read_layout(text, [span(text, "Leicestershire 296", "PERSON")])) == [
        ("Leicestershire", "person")
    ]


def test_a_results_line_is_the_names_either_side_of_the_score():
    text = "Millwall 2 Burnley 1"
    found = read_layout(text, [span(text, "Millwall 2 Burnley 1", "ORG")])
    assert names(found) == [("Millwall", "organization"), ("Burnley", "organization")]
    assert [(s.start, s.end) for s in found] == [(0, 8), (11, 18)]


def test_a_small_number_of_its_own_stays_where_no_other_figure_is():
    text = "Channel 4 said it would show the film ."
    assert names(read_layout(text, [span(text, "Channel 4", "ORG")])) == [
        ("Channel 4", "organization")
    ]


def test_stray_brackets_and_dashes_go():
    text = "2. Giovanni Lombardi ( Italy ) Polti 5 seconds behind"
    assert names(read_layout(text, [span(text, "Giovanni Lombardi (", "PERSON")])) == [
        ("Giovanni Lombardi", "person")
    ]


def test_a_headlines_names_are_not_kept():
    text = "CRICKET - PAKISTAN WIN TOSS , PUT ENGLAND IN TO BAT ."
    assert read_layout(text, [span(text, "PUT ENGLAND", "ORG")]) == []


def test_a_datelines_names_are_places():
    text = "TOFTIR , Faroe Islands 1996-08-31"
    found = read_layout(text, [span(text, "TOFTIR", "ORG"), span(text, "Faroe Islands", "GPE")])
    assert names(found) == [("TOFTIR", "place"), ("Faroe Islands", "place")]
    text = "AMSTERDAM 1996-08-31"
    assert names(read_layout(text, [span(text, "AMSTERDAM 1996-08-31", "GPE")])) == [
        ("AMSTERDAM", "place")
    ]


def test_a_title_run_into_a_name_is_trimmed_and_the_person_kept():
    text = "Spokesman Ali Reza said the talks would resume ."
    assert names(read_roles(text, [span(text, "Spokesman Ali Reza", "ORG")])) == [
        ("Ali Reza", "person")
    ]
    text = "Their Chief Revenue Officer signed the order ."
    assert read_roles(text, [span(text, "Chief Revenue Officer", "ORG")]) == []


def test_a_first_name_alone_the_model_calls_an_organisation_is_a_person():
    text = "its so painful to watch the way Suzanne and Wendy interact"
    assert names(read_roles(text, [span(text, "Wendy", "ORG")])) == [("Wendy", "person")]
    text = "Lufthansa cut its fares ."
    assert names(read_roles(text, [span(text, "Lufthansa", "ORG")])) == [
        ("Lufthansa", "organization")
    ]


def test_a_word_the_text_also_writes_in_lower_case_is_not_a_name():
    text = "( Cough cough so you not gon add my name on that list )"
    assert read_roles(text, [span(text, "Cough", "ORG")]) == []


def test_a_surname_alone_is_the_person_named_in_full():
    assert surname("Jeff Tarango") == "tarango"
    assert surname("Tarango") is None
    text = "Tarango , whose tantrum brought him a fine , lost ."
    found = read_surnames([span(text, "Tarango", "ORG")], {"tarango"})
    assert names(found) == [("Tarango", "person")]
    assert names(read_surnames([span(text, "Tarango", "ORG")], {"rios"})) == [
        ("Tarango", "organization")
    ]


def test_the_workspace_knows_a_surname_once_a_person_is_named_in_full(alice):
    memory_remember(agent=alice.agent, text="Jeff Tarango said he would appeal the fine.")
    workspace = alice.agent.workspace_id
    assert Entity.objects.filter(workspace_id=workspace, name="Jeff Tarango", kind="person")
    later = [[span("Tarango lost again .", "Tarango", "ORG")]]
    assert known_surnames(workspace, later) == {"tarango"}
    assert known_surnames(workspace, [[span("Rios won .", "Rios", "ORG")]]) == set()


def test_a_person_written_in_lower_case_is_kept():
    text = "thank you fake kevin smith"
    found = read_roles(text, read_layout(text, clean(text, [span(text, "kevin smith", "PERSON")])))
    assert names(found) == [("kevin smith", "person")]
    text = "alex when you two come to the city ?"
    found = read_roles(text, read_layout(text, clean(text, [span(text, "alex", "PERSON")])))
    assert names(found) == [("alex", "person")]


def test_lower_case_words_that_are_not_a_name_are_not_kept():
    text = "your last name is martin lmao"
    assert clean(text, [span(text, "martin lmao", "PERSON")]) == []
    text = "the matchup was sad"
    assert clean(text, [span(text, "matchup", "PERSON")]) == []
    text = "go to the berlin office"  # lower case, but the model did not call it a person
    assert clean(text, [span(text, "berlin", "GPE")]) == []


def test_quote_marks_and_symbols_at_a_names_edges_go():
    text = "Jason ' s so rude to that girl"
    assert names(clean(text, [span(text, "Jason '", "ORG")])) == [("Jason", "organization")]
    text = "Alan Watts 💖"
    assert names(clean(text, [span(text, "Alan Watts 💖", "PERSON")])) == [("Alan Watts", "person")]
    text = "Things get ' Ray Bradbury- ish ' ."
    assert names(clean(text, [span(text, "' Ray Bradbury", "PERSON")])) == [
        ("Ray Bradbury", "person")
    ]


def test_a_span_run_across_a_comma_or_a_bracket_is_the_names_either_side():
    text = "4 - Goran Ivanisevic ( Croatia ) beat Scott Draper ( Australia ) 6-7"
    found = read_layout(text, [span(text, "Scott Draper ( Australia", "ORG")])
    assert names(found) == [("Scott Draper", "organization"), ("Australia", "organization")]
    text = "August 21-25 Sixth test ( at The Oval , London ) ."
    assert names(read_layout(text, [span(text, "Oval , London", "GPE")])) == [
        ("Oval", "place"),
        ("London", "place"),
    ]
    text = "Rad ( B ) 4 1 1 2 2 3 4"  # one letter in brackets is no name
    assert names(read_layout(text, [span(text, "Rad ( B", "ORG")])) == [("Rad", "organization")]
