"""Periods in words (planner/periods.py): what a question to memory asks about, what day a statement is about."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.periods import EARLIEST, Period, TimeQuestion, around, happened, in_question

TODAY = dt.date(2026, 12, 1)  # a Tuesday
D = dt.date


def span(a: str, b: str | None = None) -> Period:
    return Period(D.fromisoformat(a), D.fromisoformat(b or a))


QUESTIONS = [
    ("who did I meet last May?", span("2026-05-01", "2026-05-31"), None),
    ("what did I do in 2023?", span("2023-01-01", "2023-12-31"), None),
    ("what happened two weeks ago?", span("2026-11-14", "2026-11-20"), None),
    ("what happened 3 days ago", span("2026-11-28"), None),
    ("what did I do last week?", span("2026-11-23", "2026-11-29"), None),
    ("what happened the week before last?", span("2026-11-16", "2026-11-22"), None),
    ("what did I eat on Friday?", span("2026-11-27"), None),  # a question looks back
    ("what will I do on Saturday?", span("2026-12-05"), None),  # ...unless it says ahead
    ("what did I do in the last two weeks?", span("2026-11-17", "2026-12-01"), None),
    ("what did I do in March 2026", span("2026-03-01", "2026-03-31"), None),
    ("what did I do on march 3rd?", span("2026-03-03"), None),
    ("what did I do in may", span("2026-05-01", "2026-05-31"), None),
    ("since June, how often did I run?", span("2026-06-01", "2026-12-01"), None),
    ("what did I do last weekend", span("2026-11-28", "2026-11-29"), None),
    ("where did I go last summer?", span("2026-06-01", "2026-08-31"), None),
    ("what did I do at christmas?", span("2025-12-24", "2025-12-26"), None),
    ("what did I do on 2026-02-14?", span("2026-02-14"), None),
    ("when did I last see the dentist?", None, "last"),
    ("when did I see the dentist last?", None, "last"),
    ("the first time I went climbing, who came?", None, "first"),
    ("where do I live now?", None, "last"),
    ("what may I have said about Ana?", None, None),  # "may" the verb
    ("what is my sister's name?", None, None),
]


@pytest.mark.parametrize(("question", "period", "order"), QUESTIONS)
def test_a_question_names_the_days_it_asks_about_and_whether_it_wants_the_first_or_last(question, period, order):
    asked = in_question(question, TODAY)
    assert asked.period == period
    assert asked.order == order


def test_before_a_period_is_every_day_up_to_its_start():
    assert in_question("what did I do before March?", TODAY).period == Period(EARLIEST, D(2026, 2, 28))


def test_a_named_period_is_not_read_as_wanting_the_latest_match():
    assert in_question("who did I meet last may?", TODAY).order is None


def test_an_event_a_question_is_relative_to_is_left_for_memory_to_date():
    asked = in_question("what was I going to do after the move?", TODAY)
    assert (asked.anchor, asked.side, asked.period) == ("the move", "after", None)
    asked = in_question("when did I last see the dentist before the move?", TODAY)
    assert (asked.anchor, asked.side, asked.order) == ("the move", "before", "last")
    move = span("2026-04-18")
    assert around(move, "before", TODAY) == Period(EARLIEST, D(2026, 4, 17))
    assert around(move, "after", TODAY) == span("2026-04-19", "2026-12-01")


def test_a_question_about_nothing_in_time_is_falsy():
    assert not in_question("what is my cat called?", TODAY)
    assert in_question("what did I do last week?", TODAY)


SAID = D(2026, 3, 12)  # a Thursday

STATEMENTS = [
    ("I went to Lisbon last week", span("2026-03-02", "2026-03-08")),
    ("I'm flying to Oslo next Friday", span("2026-03-13")),
    ("Yesterday I saw the dentist", span("2026-03-11")),
    ("On Saturday we hiked with Priya", span("2026-03-07")),
    ("On Saturday I will hike", span("2026-03-14")),
    ("We moved to Utrecht in February", span("2026-02-01", "2026-02-28")),
    ("I'll visit Ana in May", span("2026-05-01", "2026-05-31")),
    ("I started at Norvik two weeks ago", span("2026-02-23", "2026-03-01")),
    ("The user visited the dentist on 2026-03-05.", span("2026-03-05")),
    ("I have Wednesday afternoons free for meetings", None),  # no tense, no direction: a habit
    ("Every Monday I swim", None),
    ("I swim on Mondays", None),
    ("Ana lives in Lisbon", None),
    ("I may go", None),
]


@pytest.mark.parametrize(("text", "period"), STATEMENTS)
def test_a_statement_is_about_the_days_its_words_name_from_the_day_it_was_said(text, period):
    assert happened(text, SAID) == period


def test_a_period_describes_itself_for_the_model():
    assert span("2026-03-05").describe() == "2026-03-05"
    assert span("2026-03-02", "2026-03-08").describe() == "2026-03-02 to 2026-03-08"
    assert Period(EARLIEST, D(2026, 2, 28)).describe() == "before 2026-03-01"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "february 30",
        "in 900 years",
        "9999 years ago",
        "the 45th of may",
        "may may may",
        "last last last",
        "before before",
        "since",
        "💥" * 50,
        "in 1899",
        "a" * 5000,
    ],
)
def test_nonsense_and_impossible_dates_give_no_period_and_no_error(text):
    asked = in_question(text, TODAY)
    assert isinstance(asked, TimeQuestion)
    if asked.period:
        assert EARLIEST <= asked.period.start <= asked.period.end
    assert happened(text, SAID) is None or happened(text, SAID).start <= happened(text, SAID).end


PHRASES = [
    "yesterday",
    "last week",
    "last month",
    "two weeks ago",
    "3 days ago",
    "last may",
    "in june",
    "on friday",
    "last weekend",
    "this year",
    "last summer",
    "the week before last",
    "the last two weeks",
]


@given(st.dates(D(1950, 1, 1), D(2100, 12, 31)), st.sampled_from(PHRASES))
def test_a_question_looking_back_asks_about_days_before_or_on_today(today, phrase):
    period = in_question(f"what did I do {phrase}?", today).period
    assert period is not None and period.start <= period.end
    assert period.start <= today  # a question that looks back never asks only about the future


@given(st.dates(D(1950, 1, 1), D(2100, 12, 31)), st.integers(1, 30))
def test_n_days_ago_is_that_day(today, n):
    assert in_question(f"what happened {n} days ago?", today).period == Period(*(today - dt.timedelta(days=n),) * 2)


@given(st.dates(D(1950, 1, 1), D(2100, 12, 31)), st.sampled_from(["january", "april", "may", "october", "december"]))
def test_last_month_name_is_the_latest_such_month_that_is_over(today, month):
    period = in_question(f"what did I do last {month}?", today).period
    assert period.start.day == 1 and period.start.strftime("%B").lower() == month
    assert period.start <= today and period.end < today or period.start.month == today.month


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# A date as people write it: the month in full or short (with or without a dot), any case, the day before or
# after it, with or without "th", a comma or "of". The oracle is the calendar (strftime), not the parser.
DATE_FORMATS = [
    lambda d, mon: f"{d.day} {mon} {d.year}",
    lambda d, mon: f"{_ordinal(d.day)} of {mon} {d.year}",
    lambda d, mon: f"{mon} {d.day}, {d.year}",
    lambda d, mon: f"{mon} {_ordinal(d.day)} {d.year}",
    lambda d, mon: f"the {_ordinal(d.day)} of {mon}, {d.year}",
]


@given(
    st.dates(D(1950, 1, 1), D(2099, 12, 31)),
    st.sampled_from(DATE_FORMATS),
    st.sampled_from(["%B", "%b", "%b."]),
    st.sampled_from([str, str.lower, str.upper, str.title]),
    st.sampled_from(["What did Elise play on {}?", "did she spend {} alone", "Where was I {}?"]),
)
def test_a_date_written_any_common_way_is_that_day(day, form, month, case, question):
    written = form(day, day.strftime(month))
    if month == "%b." and day.month == 5:
        written = written.replace("May.", "May")  # "May" has no short form to mark
    assert in_question(case(question.format(written)), TODAY).period == Period(day, day)
    assert happened(f"I played basketball on {case(written)}.", TODAY) == Period(day, day)


@given(st.dates(D(1950, 1, 1), D(2099, 12, 31)), st.sampled_from(["%B %Y", "%b %Y", "%b. %Y"]))
def test_a_month_and_year_written_short_or_long_is_that_month(day, form):
    first = day.replace(day=1)
    last = (first + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    assert in_question(f"what did I do in {first.strftime(form)}?", TODAY).period == Period(first, last)


@given(
    st.dates(D(1950, 1, 8), D(2099, 12, 20)),
    st.sampled_from(
        [
            ("shortly before", -7, -1),
            ("just after", 1, 7),
            ("the day before", -1, -1),
            ("the day after", 1, 1),
            ("a few days before", -3, -1),
            ("the week after", 1, 7),
            ("before", None, -1),
        ]
    ),
    st.sampled_from(DATE_FORMATS),
)
def test_shortly_before_a_date_is_the_days_just_before_it_not_every_day_before(day, near, form):
    words, first, last = near
    period = in_question(f"what was I watching {words} {form(day, day.strftime('%B'))}?", TODAY).period
    start = EARLIEST if first is None else day + dt.timedelta(days=first)
    assert period == Period(start, day + dt.timedelta(days=last))


@given(
    st.dates(D(1950, 1, 1), D(2099, 12, 31)),
    st.sampled_from(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]),
    st.sampled_from(["a", "an", "any", "one", "some"]),
    st.sampled_from([str, str.title]),
)
def test_a_weekday_after_a_or_any_names_no_day_in_particular(said, weekday, article, case):
    generic = f"brunch with a friend, as {article} {case(weekday)} morning tradition of ours"
    assert happened(f"I had {generic}.", said) is None  # a habit, not a date
    assert happened(f"Today I had {generic}.", said) == Period(said, said)  # "today" is the day it names
    last = happened(f"I had brunch on {case(weekday)}.", said)
    assert last.start == last.end and last.start.strftime("%A").lower() == weekday and last.start < said


@given(
    st.sampled_from(["Jan", "jan", "Jun", "Mar", "Dec", "Oct", "Aug"]),
    st.integers(1, 28),
    st.sampled_from(["I gave {} {} euros.", "did I see {} {} times?", "what did {} {} say?"]),
)
def test_a_short_month_name_before_a_bare_number_is_not_sure_to_be_a_date(name, n, sentence):
    # "Jan" is a name too: before a bare number it names no day; with "on", a year, a dot or "20th" it does
    assert in_question(sentence.format(name, n), TODAY).period is None
    assert happened(sentence.format(name, n), TODAY) is None
    month = {"jan": 1, "jun": 6, "mar": 3, "dec": 12, "oct": 10, "aug": 8}[name.lower()]
    for dated in (f"on {name} {n}", f"{name}. {n}", f"{name} {_ordinal(n)}"):
        day = in_question(f"what did I do {dated}?", TODAY).period.start
        assert (day.month, day.day) == (month, n) and day <= TODAY
