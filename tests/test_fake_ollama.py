"""The shared fake server keeps tests apart: each test's fake answers only under its own prefix."""

import ollama
import pytest
from fake_ollama import FakeOllama


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
