"""The model seam (planner/model/base.py): the scripted model in the package answers exactly as the real
client does through the fake Ollama server, for the same script, so tests that use it test the planner."""

from __future__ import annotations

import collections
import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.model.base import ChatModel, ModelError, ModelFault
from planner.model.client import Ollama
from planner.model.scripted import ScriptedModel, embedding, schema_problem

MESSAGES = [{"role": "system", "content": "You plan."}, {"role": "user", "content": "add milk"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add_task",
            "description": "Add a task.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]
REPLIES = {
    "text": {"content": "Added milk to your list, for tomorrow morning."},
    "tool calls": {"tool_calls": [{"name": "add_task", "arguments": {"title": "milk", "tags": ["shop"]}}]},
    "thinking": {"content": "Done.", "thinking": "The user wants milk."},
    "counts": {"content": "ok", "prompt_eval_count": 812, "eval_count": 31, "done_reason": "length"},
    "a 500": {"status": 500, "error": "llama runner process has terminated"},
    "a 503": {"status": 503, "error": "server busy"},
    "cut short": {"content": "Added milk to", "cut": True},
    "dropped": {"content": "Added milk to your list, for tomorrow.", "drop": True},
    "not JSON": {"content": "Added", "garbage": True},
}


def both(fake):
    """The real client on the fake server, and the scripted model, each scripted the same way."""
    scripted = ScriptedModel()
    return [("ollama", Ollama(fake.url, timeout=5), fake), ("scripted", scripted, scripted)]


def outcome(model, script, reply):
    """What one streamed call gives: the result's fields and the tokens seen, or the error."""
    script.script("main", reply)
    seen: list[str] = []
    try:
        r = model.chat_stream(
            "main", MESSAGES, tools=TOOLS, options={"num_ctx": 8192}, keep_alive="30m", on_token=seen.append
        )
    except ModelError as e:
        return ("error", str(e), e.kind)
    return (r.content, r.thinking, r.tool_calls, r.done_reason, r.prompt_eval_count, r.eval_count, "".join(seen))


@pytest.mark.parametrize("name", REPLIES)
def test_the_scripted_model_gives_what_the_client_gives_through_the_fake_server(fake, name):
    (_, real, fake_script), (_, scripted, own) = both(fake)
    assert outcome(scripted, own, REPLIES[name]) == outcome(real, fake_script, REPLIES[name])


def test_a_request_is_recorded_with_the_fields_the_server_receives(fake):
    (_, real, fake_script), (_, scripted, own) = both(fake)
    for model, script in ((real, fake_script), (scripted, own)):
        outcome(model, script, REPLIES["text"])
    sent, kept = fake.chats("main")[-1], scripted.chats("main")[-1]
    assert set(kept) - {"path"} == set(sent)  # what was not set is not sent: no "think" for a model without it
    for key in ("model", "messages", "tools", "options", "keep_alive"):
        assert kept[key] == sent[key], key
    assert kept["stream"] is sent["stream"] is True


def test_an_agents_requests_are_recorded_as_the_server_receives_them(fake, tmp_path):
    """Tool calls, tool results and the critic's JSON call of a whole turn: the same bodies either way."""
    from helpers import TODAY

    from planner.agent.build import build_agent
    from planner.settings import Config
    from planner.storage.db import Store

    bodies = []
    for name, model, script in both(fake):
        script.script(
            "main", {"tool_calls": [{"name": "add_task", "arguments": {"title": "milk"}}]}, {"content": "Added milk."}
        )
        config = Config(
            model="main",
            critic_model="critic",
            embed_model="embed",
            db_path=tmp_path / f"{name}.db",
            today=TODAY,
            auto_memory=False,
        )
        store = Store(config.db_path)
        agent = build_agent(config, store, model, "s", None)
        assert agent.run_turn("add milk").reply == "Added milk."
        agent.close()
        store.close()
        bodies.append([{k: v for k, v in b.items() if k != "path"} for b in script.chats()])
    sent, kept = bodies
    assert [b["model"] for b in sent] == [b["model"] for b in kept] == ["main", "main", "critic"]
    # What the ollama client does on the way, which the scripted model does not copy: it leaves out a message's
    # empty fields, sends no tools as [], and keeps of a tool parameter only the keys its types have (no bounds).
    for body in kept:
        body["messages"] = [{k: v for k, v in m.items() if v} for m in body["messages"]]
    names = lambda body: [t["function"]["name"] for t in body.get("tools") or []]  # noqa: E731
    assert [names(b) for b in sent] == [names(b) for b in kept]
    assert [{k: v for k, v in b.items() if k != "tools"} for b in sent] == [
        {k: v for k, v in b.items() if k != "tools"} for b in kept
    ]


@pytest.mark.parametrize(
    ("capabilities", "kwargs", "kind"),
    [
        (["completion"], {"tools": TOOLS}, ModelFault.CANNOT),
        (["completion", "tools"], {"think": True}, ModelFault.CANNOT),
        (["embedding"], {}, ModelFault.CANNOT),
        (["completion", "tools", "thinking"], {"think": True, "tools": TOOLS}, None),
    ],
)
def test_a_call_the_model_lacks_the_capability_for_fails_alike(fake, capabilities, kwargs, kind):
    lines = []
    for _, model, script in both(fake):
        script.models["main"] = capabilities
        script.script("main", {"content": "ok"})
        try:
            lines.append(model.chat_stream("main", MESSAGES, **kwargs).content)
        except ModelError as e:
            assert e.kind is kind
            lines.append(str(e))
    assert lines[0] == lines[1] and (kind is None) == (lines[0] == "ok")


def test_json_calls_and_embeddings_and_facts_match_the_client(fake):
    schema = {
        "type": "object",
        "properties": {"done": {"type": "boolean"}, "critique": {"type": "string"}},
        "required": ["done", "critique"],
    }
    real, scripted = Ollama(fake.url, timeout=5), ScriptedModel()
    for script in (fake, scripted):
        script.script("critic", {"content": '{"done": false, "critique": "say the date"}'})
    results = [m.chat_json("critic", MESSAGES, schema=schema, purpose="critic") for m in (real, scripted)]
    assert results[0].content == results[1].content and scripted.chats("critic")[0]["format"] == schema
    assert scripted.embed("embed", ["buy milk", "query: milk"]) == real.embed("embed", ["buy milk", "query: milk"])
    assert scripted.facts("main") == real.facts("main") == ("8.0B", ["completion", "tools"])
    for model in (scripted, real):
        with pytest.raises(ModelError) as e:
            model.facts("nope")
        assert e.value.kind is ModelFault.NOT_FOUND and "ollama pull nope" in str(e.value)


def test_the_critic_unscripted_gives_the_smallest_reply_its_schema_allows_as_the_fake_server_does(fake):
    from planner.prompts import CRITIC_SCHEMA, EXTRACT_SCHEMA

    for schema, said in ((CRITIC_SCHEMA, '{"critique": "", "done": true}'), (EXTRACT_SCHEMA, '{"memories": []}')):
        assert [m.chat_json("critic", MESSAGES, schema=schema).content for _, m, _ in both(fake)] == [said, said]


def test_another_model_unscripted_is_an_error_the_user_can_read():
    with pytest.raises(ModelError, match=r"no scripted reply left for main \(HTTP 500\)"):
        ScriptedModel().chat_stream("main", MESSAGES)


def test_a_scripted_json_reply_that_breaks_its_schema_fails_the_test_unless_cut_short():
    m = ScriptedModel()
    schema = {"type": "object", "properties": {"done": {"type": "boolean"}}, "required": ["done"]}
    m.script("critic", {"content": '{"done": "yes"}'}, {"content": '{"done": tr', "done_reason": "length"})
    with pytest.raises(AssertionError, match=r"\$\.done is not boolean"):
        m.chat_json("critic", MESSAGES, schema=schema)
    assert m.violations and "$.done is not boolean" in m.violations[0]  # kept, for a fixture to fail the test on
    assert m.chat_json("critic", MESSAGES, schema=schema).content == '{"done": tr'  # as Ollama cuts it at num_predict


@pytest.mark.parametrize(
    ("value", "schema", "problem"),
    [
        ('{"a": 1}', {"type": "object", "required": ["a", "b"]}, "$ lacks b"),
        (
            '{"a": 1, "z": 2}',
            {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
            "$ has keys the schema does not: z",
        ),
        (
            '{"k": "x"}',
            {"type": "object", "properties": {"k": {"enum": ["fact", "event"]}}},
            "$.k is not one of ['fact', 'event']",
        ),
        ('{"n": true}', {"type": "object", "properties": {"n": {"type": "integer"}}}, "$.n is not integer"),
        (
            '{"l": [1, "2"]}',
            {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "integer"}}}},
            "$.l[1] is not integer",
        ),
        ('{"n": 1.5}', {"type": "object", "properties": {"n": {"type": "number"}}}, None),
    ],
)
def test_the_schema_check_names_the_first_thing_wrong(value, schema, problem):
    assert schema_problem(value, schema) == problem


def test_both_implement_the_protocol_the_agent_takes(fake):
    assert all(isinstance(model, ChatModel) for _, model, _ in both(fake))


@pytest.mark.parametrize("name", [n for n, r in REPLIES.items() if {"status", "cut", "drop", "garbage"} & set(r)])
def test_every_fault_has_a_kind_of_the_enum(fake, name):
    kinds = {outcome(model, script, REPLIES[name])[2] for _, model, script in both(fake)}
    assert len(kinds) == 1 and all(type(k) is ModelFault for k in kinds)


def test_a_kind_outside_the_enum_is_refused_where_the_error_is_made():
    with pytest.raises(ValueError):
        ModelError("x", "tool-parse")  # a typo is caught here, not in a comparison that is never true
    assert ModelError("x").kind is ModelFault.OTHER and ModelError("x", "cut").kind is ModelFault.CUT


def slot_counts(text: str, dim: int = 256) -> collections.Counter:
    """A second implementation of the bag of hashed words, written from its description: each word that is
    not a stopword counts in slot md5(word) mod dim, after a search prefix is dropped."""
    from planner.model.scripted import STOPWORDS

    text = text.split(": ", 1)[1] if text.startswith(("query: ", "search_query: ")) else text
    words = [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if w not in STOPWORDS]
    return collections.Counter(int.from_bytes(hashlib.md5(w.encode()).digest(), "big") % dim for w in words)


@given(
    st.lists(st.sampled_from("milk bread dentist friday rent plants bike".split()), min_size=1, max_size=6),
    st.lists(st.sampled_from("tax passport keys garden milk".split()), min_size=1, max_size=6),
)
def test_embeddings_are_unit_vectors_whose_cosine_is_that_of_the_words_they_share(a, b):
    va, vb = embedding(" ".join(a)), embedding("query: " + " ".join(b))
    assert sum(x * x for x in va) == pytest.approx(1)
    ca, cb = slot_counts(" ".join(a)), slot_counts("query: " + " ".join(b))
    expected = (
        sum(ca[k] * cb[k] for k in ca) / (sum(v * v for v in ca.values()) * sum(v * v for v in cb.values())) ** 0.5
    )
    cosine = sum(x * y for x, y in zip(va, vb, strict=True))
    assert cosine == pytest.approx(expected, abs=1e-12)
    if set(a) & set(b):  # "milk" is in both lists of words
        assert cosine > 0
