"""A title that ends with the day the task is due, in words, loses those words (tools/titles.py `cut_day`),
through add_task and update_task: "Call the bank tomorrow" would read "tomorrow" for ever, also once moved.
The oracle for a day's date is the calendar arithmetic below, not dates.py."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.tools.titles import cut_day

TODAY = dt.date(2026, 12, 1)  # a Tuesday
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _day(phrase: str) -> dt.date:
    """The date a day phrase means, by arithmetic: today, tomorrow, or the coming weekday (not today's)."""
    if phrase == "today":
        return TODAY
    if phrase == "tomorrow":
        return TODAY + dt.timedelta(days=1)
    ahead = (WEEKDAYS.index(phrase.removeprefix("this ")) - TODAY.weekday()) % 7
    return TODAY + dt.timedelta(days=ahead)


PHRASES = ["today", "tomorrow", *[d for d in WEEKDAYS if d != "tuesday"], "this friday", "this saturday"]
JOINS = {"on", "by", "for", "due", "at", "until", "till", "before", "from", "this", "next", "starting"}
APART = {"every", "each", "after", "except", "since", "past", "than", "or", "and"}  # the day is part of the title
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8).filter(lambda w: w not in JOINS | APART)
bases = st.lists(words, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(bases, st.sampled_from(["", "on ", "for ", "by ", "due "]), st.sampled_from(PHRASES))
def test_a_trailing_day_that_is_the_due_day_is_cut(base, join, phrase):
    title = f"{base.capitalize()} {join}{phrase}"
    cut, said = cut_day(title, _day(phrase).isoformat(), TODAY)
    assert cut == base.capitalize() and phrase in said["title_cut"]


@settings(max_examples=80, deadline=None)
@given(bases, st.sampled_from(PHRASES), st.sampled_from(PHRASES))
def test_a_day_that_is_not_the_due_day_or_not_at_the_end_stays(base, phrase, due_phrase):
    title = f"{base} {phrase}"
    if _day(phrase) != _day(due_phrase):
        assert cut_day(title, _day(due_phrase).isoformat(), TODAY) == (title, {})
    inside = f"call {phrase} about {base}"
    assert cut_day(inside, _day(phrase).isoformat(), TODAY) == (inside, {})


def test_nothing_is_cut_to_an_empty_title_or_without_a_due_date():
    assert cut_day("tomorrow", "2026-12-02", TODAY) == ("tomorrow", {})
    assert cut_day("call the bank tomorrow", None, TODAY) == ("call the bank tomorrow", {})


def test_add_task_and_update_task_keep_the_title_without_its_day(ctx):
    from planner.tools import dispatch

    added, ok = dispatch(ctx, "add_task", {"title": "Call the bank tomorrow", "due_date": "2026-12-02"})
    assert ok and added["added"]["title"] == "Call the bank" and "tomorrow" in added["title_cut"]
    moved, ok = dispatch(ctx, "update_task", {"id": 1, "title": "Call the bank on friday", "due_date": "friday"})
    assert ok and moved["updated"]["title"] == "Call the bank" and moved["updated"]["due_date"] == "2026-12-04"


@pytest.mark.parametrize(
    ("title", "due"),
    [
        ("Prepare for Black Friday", "2026-12-04"),
        ("Hot cross buns for Good Friday", "2026-12-04"),
        ("Call mum after Friday", "2026-12-04"),
        ("Watch Today", "2026-12-01"),
        ("Bins out every Wednesday", "2026-12-02"),
    ],
)
def test_a_day_that_is_part_of_a_name_or_a_phrase_stays(title, due):
    assert cut_day(title, due, TODAY) == (title, {})


@settings(max_examples=40, deadline=None)
@given(bases, st.sampled_from(sorted(APART)), st.sampled_from(PHRASES))
def test_a_day_after_a_word_that_makes_it_part_of_the_title_stays(base, apart, phrase):
    title = f"{base} {apart} {phrase}"
    assert cut_day(title, _day(phrase).isoformat(), TODAY) == (title, {})


def test_a_day_after_a_joining_word_is_cut_after_a_name_too():
    assert cut_day("Visit Ana on Saturday", "2026-12-05", TODAY)[0] == "Visit Ana"
