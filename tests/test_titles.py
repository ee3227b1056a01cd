"""Titles without their date phrase: "buy milk for tomorrow" sent with due_date "tomorrow" is stored
as "buy milk", and the result says what was cut; in every profile, since it is what the user meant."""

import pytest
from conftest import call, run, tasks
from hypothesis import given
from hypothesis import strategies as st

from planner.tools import dispatch
from planner.tools.titles import cut_title


@pytest.mark.parametrize(
    "title, phrases, kept, cut",
    [
        ("buy milk for tomorrow", {"due_date": "tomorrow"}, "buy milk", "for tomorrow"),
        ("call the dentist on friday", {"due_date": "friday"}, "call the dentist", "on friday"),
        ("Call Mom Next Friday.", {"due_date": "next friday"}, "Call Mom", "Next Friday."),
        ("renew passport due 2026-12-15", {"due_date": "2026-12-15"}, "renew passport", "due 2026-12-15"),
        ("water the plants every monday", {"repeat": "every monday"}, "water the plants", "every monday"),
        ("dentist, remind me an hour before", {"remind": "an hour before"}, "dentist", "remind me an hour before"),
    ],
)
def test_a_phrase_the_call_also_gives_is_cut_from_the_end_of_the_title(title, phrases, kept, cut):
    new, field = cut_title(title, **phrases)
    assert new == kept and field["title_cut"].startswith(f'"{cut}" was taken out of the title: it is the ')


@pytest.mark.parametrize(
    "title, phrases",
    [
        ("tomorrow", {"due_date": "tomorrow"}),  # nothing would be left
        ("buy milk for tomorrow's party", {"due_date": "tomorrow"}),  # not at the end
        ("call mom tomorrow about the trip", {"due_date": "tomorrow"}),
        ("visit the sunday market", {"due_date": "sunday"}),
        ("read chapter 3", {"due_date": "3"}),  # a number is not a date phrase
        ("buy milk", {"due_date": "tomorrow", "repeat": None, "remind": ""}),
        (None, {"due_date": "tomorrow"}),  # update_task without a title
    ],
)
def test_a_title_without_the_phrase_at_its_end_stays_as_sent(title, phrases):
    assert cut_title(title, **phrases) == (title, {})


@given(st.text(min_size=1, max_size=60), st.sampled_from(["tomorrow", "friday", "every monday", "2026-12-15"]))
def test_a_cut_title_is_the_start_of_the_one_sent_and_never_empty(title, phrase):
    new, field = cut_title(f"{title} for {phrase}", due_date=phrase)
    assert new.strip() and f"{title} for {phrase}".startswith(new)
    assert (new != f"{title} for {phrase}") == bool(field)


def test_add_and_update_store_the_cut_title_and_say_so(ctx):
    added = run(ctx, "add_task", title="buy milk for tomorrow", due_date="tomorrow")
    assert added["added"]["title"] == "buy milk" and added["added"]["due_date"] == "2026-12-02"
    assert added["title_cut"] == '"for tomorrow" was taken out of the title: it is the due date'
    moved = run(ctx, "update_task", id=1, title="buy oat milk on friday", due_date="friday")
    assert moved["updated"]["title"] == "buy oat milk" and "title_cut" in moved
    assert "title_cut" not in run(ctx, "update_task", id=1, due_date="saturday")
    result, ok = dispatch(ctx, "add_task", {"title": "tomorrow", "due_date": "tomorrow"})
    assert ok and result["added"]["title"] == "tomorrow" and "title_cut" not in result


@pytest.mark.parametrize("size", ["9.0B", "1.5B"])
def test_the_title_is_cut_in_every_profile(model, make_agent, store, size):
    model.sizes["main"] = size
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="call the dentist on friday", due_date="friday")]},
        {"content": "Added the dentist for Friday."},
    )
    r = make_agent(reflect=False).run_turn("add call the dentist on friday")
    assert [t["title"] for t in tasks(store)] == ["call the dentist"]
    assert r.tool_calls[0]["result"]["title_cut"] == '"on friday" was taken out of the title: it is the due date'
