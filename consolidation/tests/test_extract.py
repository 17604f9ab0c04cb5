"""Optional fact extraction, against a local HTTP server that speaks the OpenAI chat protocol:
facts stored with derived_from links and extraction scores, what the answer gets wrong refused,
the model's errors and time-outs fail the phase with nothing half-written; with no model
configured nothing pretends to extract."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from consolidation.models import ConsolidationRun, PhaseWatermark
from consolidation.services import consolidation_execute, consolidation_start
from memories.errors import Forbidden
from memories.models import Link, Memory
from memories.operations import memory_remember


class Chat(BaseHTTPRequestHandler):
    answers: list = []  # (status, content or body, delay in seconds)
    asked: list = []

    def do_POST(self):  # noqa: N802 (the standard library's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Chat.asked.append((self.path, self.headers.get("Authorization"), body))
        status, content, delay = Chat.answers.pop(0)
        time.sleep(delay)
        if status == 200:
            data = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
        else:
            data = json.dumps({"error": {"message": content, "type": "server_error"}}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting

    def log_message(self, *args):
        pass


@pytest.fixture
def model(settings):
    server = HTTPServer(("127.0.0.1", 0), Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Chat.answers, Chat.asked = [], []
    settings.MM_EXTRACTION_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.MM_EXTRACTION_API_KEY = "sk-test"
    settings.MM_EXTRACTION_MODEL = "tiny-model"
    yield Chat
    server.shutdown()


def episodes(agent):
    return [
        memory_remember(agent=agent, text=text, memory_type="episodic", session="s1").memory
        for text in (
            "Dana: we signed with Zephyr today!",
            "Priya: great, so the renewal is in March?",
            "Dana: yes, March, and they want the gold plan.",
        )
    ]


def run(workspace, **options):
    return consolidation_execute(
        consolidation_start(workspace=workspace, trigger="command", phases=["extract"], **options)
    )


def test_facts_are_stored_with_their_sources_and_the_rest_refused(alice, model):
    first, second, third = episodes(alice.agent)
    model.answers = [
        (
            200,
            json.dumps(
                {
                    "facts": [
                        {
                            "text": "Zephyr renews in March, on the gold plan.",
                            "from": [second.mem_id, third.mem_id],
                            "scores": {"s": 0.8, "t": 0.6},
                        },
                        {"text": "Made up.", "from": ["ffffffffffffffff"]},
                        {"text": "Out of range.", "from": [first.mem_id], "scores": {"s": 1.5}},
                        {"text": "", "from": [first.mem_id]},
                    ]
                }
            ),
            0,
        )
    ]
    done = run(alice.agent.workspace)
    assert done.status == "done", done.error
    assert done.counts["extract"] == {
        "memories": 3,
        "facts": 1,
        "existing": 0,
        "refused": 3,
        "read_after_id": 0,
    }
    path, authorization, body = model.asked[0]
    assert path == "/v1/chat/completions" and authorization == "Bearer sk-test"
    assert body["model"] == "tiny-model" and f"[{first.mem_id}]" in body["messages"][1]["content"]
    fact = Memory.objects.get(source="extraction")
    assert fact.text == "Zephyr renews in March, on the gold plan."
    assert (fact.s_score, fact.s_origin, fact.t_origin) == (0.8, "extraction", "extraction")
    assert fact.r_score is None and fact.scope_id == first.scope_id
    assert fact.created_at == third.created_at and fact.embedding is not None
    sources = Link.objects.filter(source=fact, kind="derived_from")
    assert {link.target_memory_id for link in sources} == {second.pk, third.pk}
    assert fact.provenance.get(action="remember").reason == "consolidation: extracted by tiny-model"
    # Nothing new: the model is not asked. Done again from the start: nothing stored twice.
    assert run(alice.agent.workspace).counts["extract"]["memories"] == 0
    PhaseWatermark.objects.filter(phase="extract").delete()
    model.answers = [(200, json.dumps({"facts": [
        {"text": "Zephyr renews in March, on the gold plan.", "from": [second.mem_id]}
    ]}), 0)]  # fmt: skip
    again = run(alice.agent.workspace)
    assert (again.counts["extract"]["facts"], again.counts["extract"]["existing"]) == (0, 1)
    assert Memory.objects.filter(source="extraction").count() == 1


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ((500, "overloaded", 0), "extraction model answered 500"),
        ((200, "Here are some facts: none.", 0), "unexpected body"),
        ((200, '{"facts": "none"}', 0), "unexpected body"),
        ((200, '{"facts": []}', 2), "failed"),  # slower than the time-out
    ],
)
def test_the_models_failures_fail_the_phase_and_store_nothing(
    alice, model, settings, answer, message
):
    settings.MM_EXTRACTION_TIMEOUT = 0.5
    episodes(alice.agent)
    model.answers = [answer]
    done = run(alice.agent.workspace)
    assert done.status == "failed" and message in done.error and done.error.startswith("extract:")
    assert not Memory.objects.filter(source="extraction").exists()
    assert not PhaseWatermark.objects.filter(phase="extract").exists()


def test_without_a_model_nothing_is_extracted(alice, settings):
    settings.MM_EXTRACTION_URL = ""
    episodes(alice.agent)
    with pytest.raises(Forbidden) as caught:  # switched off: a 403 over REST
        consolidation_start(workspace=alice.agent.workspace, trigger="api", phases=["extract"])
    assert "MM_EXTRACTION_URL" in caught.value.message
    default = consolidation_execute(
        consolidation_start(workspace=alice.agent.workspace, trigger="api")
    )
    assert "extract" not in default.phases
    assert not Memory.objects.filter(source="extraction").exists()


def test_a_conversation_written_in_one_call_gives_its_facts(alice, model):
    """``POST /api/v1/messages`` with an extraction model configured: the consolidation run
    after it stores the facts the model finds in the messages, linked to them."""
    chat = {
        "session": "zephyr-call",
        "messages": [
            {"role": "user", "name": "Dana", "content": "We signed with Zephyr today!"},
            {"role": "assistant", "content": "Great. Is the renewal in March?"},
            {"role": "user", "name": "Dana", "content": "Yes, March, on the gold plan."},
        ],
    }
    response = alice.client.post("/api/v1/messages", chat, format="json")
    assert response.status_code == 201, response.json()
    ids = [r["mem_id"] for r in response.json()["results"]]
    model.answers = [
        (
            200,
            json.dumps({"facts": [{"text": "Zephyr renews in March.", "from": ids[1:]}]}),
            0,
        )
    ]
    queued = ConsolidationRun.objects.get(workspace=alice.agent.workspace, status="queued")
    done = consolidation_execute(queued)  # the run the write queued, every phase
    assert done.status == "done", done.error
    assert done.counts["extract"]["facts"] == 1
    prompt = model.asked[0][2]["messages"][1]["content"]
    assert "Dana: We signed with Zephyr today!" in prompt
    fact = Memory.objects.get(text="Zephyr renews in March.")
    sources = set(
        Link.objects.filter(source=fact, kind="derived_from").values_list(
            "target_memory__mem_id", flat=True
        )
    )
    assert sources == set(ids[1:])
