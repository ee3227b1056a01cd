"""The fake Ollama answers as Ollama does where a test could tell the difference, and the client turns each
of those answers into one line for a person. Shapes are checked against the `ollama` package's own
response types, which follow the real server, not this fake."""

import json

import httpx
import ollama
import pytest
from fake_ollama import FakeOllama
from helpers import call, clean_env, run_cli
from ollama import ChatResponse, EmbedResponse, ListResponse, ProcessResponse, ProgressResponse, ShowResponse

from planner.model.base import NO_SUCH_MODEL, NO_THINKING, NO_TOOLS, ModelError
from planner.model.client import Ollama
from planner.prompts import CRITIC_SCHEMA


def test_a_late_call_from_an_earlier_test_never_takes_this_tests_reply(hub):
    earlier = hub.attach(FakeOllama())
    hub.detach(earlier)  # that test is over; a background thread of it may still call
    now = hub.attach(FakeOllama())
    now.script("main", {"content": "mine"})
    with pytest.raises(ollama.ResponseError) as e:
        ollama.Client(host=earlier.url).chat(model="main", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 404
    reply = ollama.Client(host=now.url).chat(model="main", messages=[{"role": "user", "content": "hi"}])
    assert reply.message.content == "mine" and now.count("/api/chat") == 1 and earlier.requests == []
    hub.detach(now)


# ---------------------------------------------------------------- the shapes, by ollama-python's types


def lines(response: httpx.Response) -> list[dict]:
    """An NDJSON body, one object per line."""
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def unsent(obj: dict, model: type, leaves_out: set[str] = frozenset()) -> set[str]:
    """The fields the type declares that `obj` does not carry (by their wire names), less those real Ollama
    leaves out too; `obj` must also validate as the type."""
    model.model_validate(obj)
    wire = {f.alias or name for name, f in model.model_fields.items()}
    return {name for name in wire - set(leaves_out) if obj.get(name) is None}


def test_every_answer_has_the_shape_and_fields_of_ollamas_own_response_types(fake):
    fake.loaded.add("main")
    fake.pullable.add("newmodel")
    fake.script("main", {"content": "a reply in pieces"}, {"content": "whole"})
    with httpx.Client(base_url=fake.url) as http:
        tags = http.get("/api/tags").json()
        ps = http.get("/api/ps").json()
        show = http.post("/api/show", json={"model": "main"}).json()
        chat = http.post("/api/chat", json={"model": "main", "messages": [{"role": "user", "content": "hi"}]})
        plain = http.post("/api/chat", json={"model": "main", "messages": [], "stream": False}).json()
        embed = http.post("/api/embed", json={"model": "embed", "input": ["a", "b"]}).json()
        pull = http.post("/api/pull", json={"model": "newmodel"})
    details = ollama._types.ModelDetails
    assert unsent(tags, ListResponse) == set() and unsent(tags["models"][0], ListResponse.Model) == set()
    assert unsent(tags["models"][0]["details"], details) == set()
    assert unsent(ps, ProcessResponse) == set() and unsent(ps["models"][0], ProcessResponse.Model) == set()
    assert unsent(show, ShowResponse) == set() and unsent(show["details"], details) == set()
    *pieces, last = lines(chat)
    streamed = {
        "done_reason",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    }  # fmt: skip  (only the last piece of a stream says these)
    assert all(unsent(p, ChatResponse, streamed | {"logprobs"}) == set() for p in pieces)
    assert unsent(last, ChatResponse, {"logprobs"}) == set() and unsent(plain, ChatResponse, {"logprobs"}) == set()
    assert (
        unsent(
            embed,
            EmbedResponse,
            {"created_at", "done", "done_reason", "prompt_eval_duration", "eval_count", "eval_duration"},
        )
        == set()
    )
    progress = lines(pull)
    assert all(unsent(p, ProgressResponse, {"digest", "total", "completed"}) == set() for p in progress)
    assert any(unsent(p, ProgressResponse) == set() for p in progress)  # the download itself says all of them


def test_ps_says_when_each_loaded_model_expires_and_its_size_in_vram(fake, llm):
    fake.loaded.add("main")
    (main,) = ollama.Client(host=fake.url).ps().models
    assert main.expires_at is not None and main.expires_at.tzinfo is not None and main.size_vram > 0
    assert llm.loaded() == {"main", "main:latest"}


# ---------------------------------------------------------------- pulls


def test_a_failed_pull_is_an_error_inside_a_200_stream_as_ollama_sends_it(fake):
    with httpx.Client(base_url=fake.url) as http:
        answer = http.post("/api/pull", json={"model": "no-such-model"})
    assert answer.status_code == 200
    assert lines(answer) == [{"status": "pulling manifest"}, {"error": "pull model manifest: file does not exist"}]
    with pytest.raises(ollama.ResponseError) as e:
        list(ollama.Client(host=fake.url).pull("no-such-model", stream=True))
    assert e.value.status_code == -1  # what the client gives an error it read from a stream


def test_a_pull_of_a_name_the_library_lacks_says_so_in_one_line_with_no_http_status(fake, llm):
    with pytest.raises(ModelError) as e:
        list(llm.pull("qwen9.9:1b"))
    assert str(e.value) == NO_SUCH_MODEL.format(model="qwen9.9:1b") and e.value.kind == "not_found"
    fake.pullable.add("newmodel")
    fake.pull_fails["newmodel"] = "max retries exceeded: dial tcp: lookup registry.ollama.ai: no such host"
    with pytest.raises(ModelError) as e:
        list(llm.pull("newmodel"))
    assert str(e.value).startswith("Pulling 'newmodel' failed: max retries exceeded: dial tcp") and "\n" not in str(
        e.value
    )
    assert "HTTP" not in str(e.value) and "-1" not in str(e.value)


def test_an_error_inside_a_reply_stream_is_one_line_with_no_http_status(fake, llm):
    fake.script("main", {"content": "partly", "stream_error": "an error was encountered while running the model"})
    with pytest.raises(ModelError) as e:
        llm.chat_stream("main", [{"role": "user", "content": "hi"}])
    assert str(e.value) == (
        "Ollama stopped with an error: an error was encountered while running the model. Try again; "
        "if it keeps happening, see Ollama's log."
    )


def test_pull_at_start_and_with_slash_pull_show_the_line_for_a_name_the_library_lacks(fake, tmp_path):
    env = clean_env(OLLAMA_HOST=fake.url, PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-01")
    p = run_cli(
        [
            "--model",
            "main",
            "--critic-model",
            "critic",
            "--embed-model",
            "embed",
            "--no-auto-memory",
            "--no-reflect",
            "/pull qwen9.9:1b",
        ],
        env,
    )
    assert p.stdout.strip() == "error: " + NO_SUCH_MODEL.format(model="qwen9.9:1b"), p.stdout + p.stderr
    assert "HTTP -1" not in p.stdout + p.stderr


# ---------------------------------------------------------------- capabilities


def test_tools_or_think_to_a_model_without_that_capability_is_a_400_in_ollamas_words(fake):
    fake.models["plain"] = ["completion"]
    client = ollama.Client(host=fake.url)
    hi = [{"role": "user", "content": "hi"}]
    tool = {"type": "function", "function": {"name": "add_task", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(ollama.ResponseError) as e:
        client.chat(model="plain", messages=hi, tools=[tool])
    assert (e.value.status_code, e.value.error) == (
        400,
        "registry.ollama.ai/library/plain:latest does not support tools",
    )
    with pytest.raises(ollama.ResponseError) as e:
        client.chat(model="plain", messages=hi, think=True)
    assert (e.value.status_code, e.value.error) == (400, '"plain" does not support thinking')
    fake.script("plain", {"content": "fine"})
    assert client.chat(model="plain", messages=hi, think=False).message.content == "fine"  # false asks for nothing


def test_the_client_says_in_one_line_which_capability_the_model_lacks(fake, llm):
    fake.models["plain"] = ["completion"]
    tool = {"type": "function", "function": {"name": "add_task", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(ModelError) as e:
        llm.chat_stream("plain", [{"role": "user", "content": "hi"}], tools=[tool])
    assert str(e.value) == NO_TOOLS.format(model="plain") and e.value.kind == "cannot"
    with pytest.raises(ModelError) as e:
        llm.chat_stream("plain", [{"role": "user", "content": "hi"}], think=True)
    assert str(e.value) == NO_THINKING.format(model="plain")


def test_think_with_a_model_that_cannot_think_is_one_line_and_the_session_goes_on(fake, make_agent):
    fake.script("main", {"content": "Hi."})
    agent = make_agent(think=True)
    r = agent.run_turn("hello")
    assert r.error == NO_THINKING.format(model="main")
    agent.config.think = False
    assert agent.run_turn("hello").reply == "Hi."


# ---------------------------------------------------------------- format


def test_a_scripted_reply_that_breaks_the_chats_schema_is_a_mistake_the_fake_records():
    with FakeOllama() as fake:  # its own server: the `fake` fixture would fail this test for the mistake
        llm = Ollama(fake.url, timeout=5)
        question = [{"role": "user", "content": "check"}]
        fake.script("critic", {"content": '{"done": "yes", "critique": ""}'}, {"content": "not json"})
        for _ in range(2):
            with pytest.raises(ModelError):
                llm.chat_json("critic", question, schema=CRITIC_SCHEMA)
        assert len(fake.violations) == 2 and "'yes' is not of type 'boolean'" in fake.violations[0]
        fake.script("critic", {"content": '{"done": fal', "done_reason": "length"}, {"content": '{"done": true}'})
        assert llm.chat_json("critic", question, schema=CRITIC_SCHEMA).content == '{"done": fal'  # cut short: can be
        with pytest.raises(ModelError):
            llm.chat_json("critic", question, schema=CRITIC_SCHEMA)  # "critique" is required
        fake.script("critic", {"content": '{"done": false, "critique": "Say the date."}'})
        assert json.loads(llm.chat_json("critic", question, schema=CRITIC_SCHEMA).content)["done"] is False
        assert len(fake.violations) == 3
        assert (
            llm.chat_json(
                "critic",
                question,
                schema={"type": "object", "required": ["memories"], "properties": {"memories": {"type": "array"}}},
            ).content
            == '{"memories": []}'
        )  # fmt: skip  (an unscripted critic says the least its schema allows)


# ---------------------------------------------------------------- show, once


def test_capabilities_and_facts_ask_show_once_per_model_and_a_failure_is_asked_again(fake, llm):
    assert llm.capabilities("main") == ["completion", "tools"] and llm.facts("main") == (
        "8.0B",
        ["completion", "tools"],
    )
    assert [b["model"] for p, b in fake.requests if p == "/api/show"] == ["main"]
    fake.show_fails.add("critic")
    with pytest.raises(ModelError):
        llm.facts("critic")
    fake.show_fails.clear()
    assert llm.facts("critic")[1] == ["completion", "tools"] and fake.count("/api/show") == 3


def test_a_start_asks_show_once_for_the_main_model(fake, tmp_path):
    from helpers import run_agent

    fake.script("main", {"tool_calls": [call("list_tasks")]}, {"content": "Nothing yet."}, {"content": "Still."})
    p = run_agent(fake, tmp_path, ["what is there?", "and now?"], "--no-reflect", "--no-auto-memory")
    assert p.returncode == 0 and p.stdout.count("bot> ") == 2, p.stderr
    assert [b["model"] for path, b in fake.requests if path == "/api/show"] == ["main"]


def test_doctor_asks_show_once_per_model(fake, tmp_path):
    from helpers import run_agent

    p = run_agent(fake, tmp_path, [], "doctor")
    assert p.returncode == 0, p.stdout + p.stderr
    shown = [b["model"] for path, b in fake.requests if path == "/api/show"]
    assert sorted(shown) == ["critic", "embed", "main"]
