"""Each operation's arguments are declared once, in its serializer: the MCP input schemas, the
commands' options and the dashboard's forms must say the same, field by field."""

import pytest
from django import forms
from django.conf import settings
from django.core.management import CommandError
from rest_framework import serializers

from meaning_memory.mcp import engine_tools
from memories import rules
from memories.errors import ValidationFailed
from memories.forms import CompileForm, FeedbackForm, SearchForm
from memories.management.commands import compile as compile_command
from memories.management.commands import remember as remember_command
from memories.management.commands import search as search_command
from memories.mcp.tools import FeedbackArguments
from memories.models import STARE_DIMENSIONS
from memories.serializers import (
    CompileInput,
    FeedbackInput,
    ForgetInput,
    RememberInput,
    Rule,
    SearchInput,
    parse,
)
from memories.services import CURATE_ACTIONS, FEEDBACK_ACTIONS
from memories.shapes import add_options, command_input, form_class, json_schema

#: Every tool the server serves, by name: its input schema.
SCHEMAS = {tool.name: tool.schema for tool in engine_tools()}
#: tool → (its serializer, the arguments it takes besides the serializer's)
TOOLS = {
    "mm_remember": (RememberInput, set()),
    "mm_search": (SearchInput, set()),
    "mm_feedback": (FeedbackInput, {"mem_id"}),
    "mm_forget": (ForgetInput, {"mem_id"}),
    "mm_compile": (CompileInput, set()),
}
#: command → (its module, its serializer, its positional argument)
COMMANDS = {
    "remember": (remember_command, RememberInput, "text"),
    "search": (search_command, SearchInput, "query"),
    "compile": (compile_command, CompileInput, None),
}
UNIT_FIELDS = [
    ("mm_remember", "significance"),
    *(("mm_search", f"min_{d}_score") for d in STARE_DIMENSIONS),
]


def fields_of(serializer_class):
    return serializer_class().fields


def choices_of(serializer_class, name):
    return list(fields_of(serializer_class)[name].choices)


def plain(schema):
    """A property's own schema, without its ``null`` alternative."""
    return schema["anyOf"][0] if "anyOf" in schema else schema


def parser_of(module, name):
    return module.Command().create_parser("manage.py", name)


def dests(parser):
    return {action.dest: action for action in parser._actions}


# --- MCP input schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_each_tool_takes_exactly_its_serializers_fields(tool):
    serializer_class, extra = TOOLS[tool]
    fields = fields_of(serializer_class)
    schema = SCHEMAS[tool]

    assert set(schema["properties"]) == set(fields) | extra
    assert set(schema["required"]) == {n for n, f in fields.items() if f.required} | extra
    assert schema["additionalProperties"] is False
    for name, field in fields.items():
        assert schema["properties"][name].get("description") == (field.help_text or None), name
        nullable = "anyOf" in schema["properties"][name]
        assert nullable == field.allow_null, name


def test_every_object_in_every_schema_refuses_unknown_properties():
    def objects(schema):
        if isinstance(schema, dict):
            if schema.get("type") == "object" and "properties" in schema:
                yield schema
            for value in schema.values():
                yield from objects(value)
        elif isinstance(schema, list):
            for value in schema:
                yield from objects(value)

    found = [o for s in SCHEMAS.values() for o in objects(s)]
    assert len(found) > len(SCHEMAS)  # the nested stare_scores and bulk items too
    assert all(o["additionalProperties"] is False for o in found)


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("mm_remember", "category"),
        ("mm_remember", "memory_type"),
        ("mm_search", "category"),
        ("mm_search", "memory_type"),
        ("mm_feedback", "action"),
        ("mm_compile", "display_mode"),
        ("mm_compile", "decay"),
    ],
)
def test_enums_are_the_serializers_choices(tool, name):
    serializer_class, _ = TOOLS[tool]
    assert plain(SCHEMAS[tool]["properties"][name])["enum"] == choices_of(serializer_class, name)


def test_ranges_are_the_rules_ranges():
    properties = {tool: SCHEMAS[tool]["properties"] for tool in TOOLS}
    units = [plain(properties[tool][name]) for tool, name in UNIT_FIELDS]
    units += [plain(s) for s in properties["mm_remember"]["stare_scores"]["properties"].values()]
    assert len(units) == 11
    assert all((u["type"], u["minimum"], u["maximum"]) == ("number", 0, 1) for u in units)
    limit = properties["mm_search"]["limit"]
    assert (limit["type"], limit["minimum"]) == ("integer", 1)
    assert limit["maximum"] == settings.MM_SEARCH_MAX_LIMIT
    budget = properties["mm_compile"]["budget"]
    assert (budget["minimum"], budget["maximum"]) == (
        rules.MIN_COMPILE_BUDGET,
        settings.MM_COMPILE_MAX_BUDGET_TOKENS,
    )
    text = properties["mm_remember"]["text"]
    assert (text["minLength"], text["maxLength"]) == (1, settings.MM_MAX_TEXT_CHARS)
    assert plain(properties["mm_remember"]["valid_from"]) == {
        "type": "string",
        "format": "date-time",
    }
    assert properties["mm_feedback"]["reason"]["minLength"] == 1


def test_bulk_takes_a_list_of_remember_arguments_and_readiness_nothing():
    memories = SCHEMAS["mm_bulk_remember"]["properties"]["memories"]
    assert memories["items"] == json_schema(RememberInput) == SCHEMAS["mm_remember"]
    assert (memories["minItems"], memories["maxItems"]) == (1, settings.MM_BULK_MAX_ITEMS)
    assert SCHEMAS["mm_bulk_remember"]["required"] == ["memories"]
    assert SCHEMAS["mm_stare_readiness"]["properties"] == {}


def test_mem_id_is_checked_as_before():
    def errors(arguments):
        with pytest.raises(ValidationFailed) as caught:
            parse(FeedbackArguments, {"action": "pin", "reason": "r", **arguments})
        return caught.value.errors

    assert errors({}) == {"mem_id": ["This field is required."]}
    assert errors({"mem_id": None}) == {"mem_id": ["This field is required."]}
    assert errors({"mem_id": 12}) == {"mem_id": ["must be a string."]}
    assert errors({"mem_id": ""}) == {"mem_id": ["must be a string."]}
    parsed = parse(FeedbackArguments, {"mem_id": "ab12", "action": "pin", "reason": "r"})
    assert parsed == {"mem_id": "ab12", "action": "pin", "reason": "r"}


# --- Command options -------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_every_field_of_its_serializer(command):
    module, serializer_class, positional = COMMANDS[command]
    actions = dests(parser_of(module, command))
    for name, field in fields_of(serializer_class).items():
        assert name in actions, f"{command} has no option for {name}"
        action = actions[name]
        if name == positional:
            assert action.option_strings == []
        else:
            assert action.option_strings == ["--" + name.replace("_", "-")]
        assert action.help == (field.help_text or ""), name
        if isinstance(field, serializers.ChoiceField):
            assert action.metavar == "{" + ",".join(field.choices) + "}"


def test_command_options_read_back_as_serializer_input():
    parser = parser_of(search_command, "search")
    options = vars(parser.parse_args(["x", "--currently-valid", "false", "--min-s-score", "0.5"]))
    data = command_input(SearchInput, options)
    assert parse(SearchInput, data, from_text=True)["currently_valid"] is False
    with pytest.raises(ValidationFailed) as as_json:  # the same text as JSON is refused
        parse(SearchInput, data)
    assert set(as_json.value.errors) == {"currently_valid", "min_s_score"}

    parser = parser_of(compile_command, "compile")
    for args, shown in ([], None), (["--show-ids"], True), (["--show-ids", "false"], False):
        options = vars(parser.parse_args(["--workspace", "w", *args]))
        data = command_input(CompileInput, options)
        assert data.get("show_ids", None) == {True: "true", False: "false", None: None}[shown]

    parser = parser_of(remember_command, "remember")
    options = vars(parser.parse_args(["x", "--stare-scores", '{"s": 0.9}', "--metadata", "{}"]))
    assert command_input(RememberInput, options) == {
        "text": "x",
        "stare_scores": {"s": 0.9},
        "metadata": {},
    }
    options = vars(parser.parse_args(["x", "--stare-scores", "{s: 0.9}"]))
    with pytest.raises(CommandError, match=r"--stare-scores: must be JSON \(an object\)"):
        command_input(RememberInput, options)
    options = vars(parser.parse_args(["x", "--entities", "Zephyr"]))
    with pytest.raises(CommandError, match=r"--entities: must be JSON \(a list\)"):
        command_input(RememberInput, options)

    # A list of words is comma-separated on a command line (and in a query string).
    parser = parser_of(search_command, "search")
    options = vars(
        parser.parse_args(["x", "--related-to", "0" * 16, "--link-types", "supports,part_of"])
    )
    parsed = parse(SearchInput, command_input(SearchInput, options), from_text=True)
    assert parsed["link_types"] == ["supports", "part_of"]


# --- Dashboard forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("form", "serializer_class", "excluded"),
    [(SearchForm, SearchInput, set()), (CompileForm, CompileInput, {"as_of"})],
)
def test_each_form_has_its_serializers_fields(form, serializer_class, excluded):
    fields = fields_of(serializer_class)
    assert list(form.base_fields) == [name for name in fields if name not in excluded]
    for name, form_field in form.base_fields.items():
        assert not form_field.required
        if isinstance(fields[name], serializers.ChoiceField):
            values = [value for value, _ in form_field.choices]
            assert values == ["", *fields[name].choices], name


def test_the_forms_keep_their_labels_and_types():
    search, compiled = SearchForm.base_fields, CompileForm.base_fields
    assert [search[n].label for n in ("query", "limit", "currently_valid", "min_s_score")] == [
        "Search",
        "Results",
        "Validity",
        "Min S",
    ]
    assert [v for v, _ in search["currently_valid"].choices] == ["", "false", "true"]
    assert isinstance(search["limit"], forms.CharField)  # the serializer parses it
    assert isinstance(compiled["budget"], forms.IntegerField)  # the view uses it as is
    assert (compiled["budget"].widget.attrs["min"], compiled["budget"].widget.attrs["max"]) == (
        rules.MIN_COMPILE_BUDGET,
        settings.MM_COMPILE_MAX_BUDGET_TOKENS,
    )
    too_small = CompileForm({"budget": "5"})
    assert not too_small.is_valid()
    assert too_small.errors["budget"] == [rules.compile_budget(5)]  # the API's own message
    assert isinstance(compiled["show_ids"], forms.BooleanField)
    form = CompileForm({"budget": "300", "show_ids": "on"})
    assert form.is_valid() and form.cleaned_data["budget"] == 300
    assert form.cleaned_data["show_ids"] is True


def test_the_feedback_form_offers_the_curate_actions():
    """Its shape is the dashboard's own: the feedback actions and forgetting, one form."""
    assert list(CURATE_ACTIONS) == [*FEEDBACK_ACTIONS, "forget"]
    assert [value for value, _ in FeedbackForm.base_fields["action"].choices] == list(
        CURATE_ACTIONS
    )
    # forget is a feedback action everywhere it is named: agents' as team members'.
    assert choices_of(FeedbackInput, "action") == list(CURATE_ACTIONS)
    assert set(FeedbackForm.base_fields) == set(fields_of(FeedbackInput))


# --- A new field shows up everywhere ---------------------------------------------------------


class WiderSearch(SearchInput):
    colour = serializers.ChoiceField(choices=["red", "blue"], required=False, help_text="Hue.")
    depth = serializers.IntegerField(
        required=False, validators=[Rule(lambda v: None, minimum=2, maximum=9)]
    )
    deep = serializers.BooleanField(required=False, allow_null=True, default=None)
    labels = serializers.DictField(required=False)


def test_a_new_field_shows_up_in_every_adapter():
    properties = json_schema(WiderSearch)["properties"]
    assert properties["colour"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "description": "Hue.",
    }
    assert properties["depth"] == {"type": "integer", "minimum": 2, "maximum": 9}
    assert properties["deep"] == {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
    assert properties["labels"] == {"type": "object"}

    parser = parser_of(search_command, "search")
    add_options(parser, WiderSearch, exclude=fields_of(SearchInput))
    options = vars(
        parser.parse_args(
            ["x", "--colour", "red", "--depth", "3", "--deep", "--labels", '{"a": 1}']
        )
    )
    assert command_input(WiderSearch, options) == {
        "query": "x",
        "colour": "red",
        "depth": "3",
        "deep": "true",
        "labels": {"a": 1},
    }

    form = form_class(WiderSearch, exclude=["labels"])
    assert list(form.base_fields)[-3:] == ["colour", "depth", "deep"]
    assert [v for v, _ in form.base_fields["colour"].choices] == ["", "red", "blue"]
    typed = form_class(WiderSearch, exclude=["labels"], typed=True).base_fields["depth"]
    assert (typed.widget.attrs["min"], typed.widget.attrs["max"]) == (2, 9)
    assert typed.clean("5") == 5
    with pytest.raises(TypeError, match="DictField"):
        form_class(WiderSearch)


def test_one_validator_per_shape_serves_threads_at_once():
    """``parse`` validates with one instance of each serializer: it keeps no state between
    calls, so threads validating different inputs at once each get their own answer."""
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int):
        if n % 2:
            return parse(SearchInput, {"query": f"q{n}", "limit": n % 50 + 1})
        try:
            parse(SearchInput, {"query": "", "limit": 0, f"x{n}": 1})
        except ValidationFailed as exc:
            return exc.errors
        return None

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, range(400)))
    for n, answer in enumerate(answers):
        if n % 2:
            assert answer == {"query": f"q{n}", "limit": n % 50 + 1, "currently_valid": None}
        else:
            assert set(answer) == {"query", "limit", f"x{n}"}


def test_the_openapi_schema_publishes_what_the_api_enforces(client):
    """Request bodies refuse unknown fields, and each field carries its rule's bounds: a client
    generated from the schema sends what the engine accepts."""
    schema = client.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    remember, search = schema["RememberInput"], schema["SearchInput"]

    assert all(schema[name]["additionalProperties"] is False for name in (
        "RememberInput", "SearchInput", "FeedbackInput", "ForgetInput", "BulkRememberInput"
    ))  # fmt: skip
    significance = remember["properties"]["significance"]
    assert (significance["minimum"], significance["maximum"]) == (0, 1)
    assert remember["properties"]["text"]["maxLength"] == settings.MM_MAX_TEXT_CHARS
    assert search["properties"]["query"]["maxLength"] == settings.MM_SEARCH_MAX_QUERY_CHARS
    assert search["properties"]["limit"]["maximum"] == settings.MM_SEARCH_MAX_LIMIT
    assert schema["FeedbackInput"]["properties"]["reason"]["minLength"] == 1
    bulk = schema["BulkRememberInput"]["properties"]["memories"]
    assert (bulk["minItems"], bulk["maxItems"]) == (1, settings.MM_BULK_MAX_ITEMS)
