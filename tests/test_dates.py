"""Dates and repeat rules read in code: the phrase table, ambiguity, the dates a message names, next occurrences."""

import datetime as dt

import pytest
from helpers import TODAY, run
from hypothesis import given
from hypothesis import strategies as st

from bench import dates as date_bench
from planner.dates import AmbiguousDate, DateError, dates_in, resolve
from planner.repeats import describe_repeat, first_due, next_due, parse_repeat
from planner.storage.undoing import undo_last_turn

TODAY_TABLE, PHRASES = date_bench.load()


# ---------------------------------------------------------------- dates


@pytest.mark.parametrize("row", PHRASES, ids=[r["phrase"] for r in PHRASES])
def test_each_phrase_in_the_table_resolves_as_written(row):
    assert date_bench.planner(row["phrase"], TODAY_TABLE) == date_bench.expected(row)


def test_the_table_is_large_and_the_correctness_rate_is_shown(capsys):
    assert len(PHRASES) >= 40
    rows = date_bench.run()
    with capsys.disabled():
        print()
        date_bench.table(rows)
    ours = next(r for r in rows if r["reader"].startswith("planner"))
    assert ours["correct"] == ours["total"]
    assert all(r["correct"] <= ours["correct"] for r in rows)


def test_an_ambiguous_phrase_lists_its_readings():
    with pytest.raises(AmbiguousDate) as e:
        resolve("next friday", TODAY)
    assert e.value.readings == [dt.date(2026, 12, 4), dt.date(2026, 12, 11)]
    assert "ask the user which" in str(e.value)


@given(today=st.dates(dt.date(2000, 1, 1), dt.date(2090, 1, 1)), n=st.integers(0, 400))
def test_in_n_days_is_exact_and_weekdays_are_within_the_coming_week(today, n):
    assert resolve(f"in {n} days", today).date == today + dt.timedelta(days=n)
    for name in ("monday", "thursday", "sunday"):
        d = resolve(name, today).date
        assert 1 <= (d - today).days <= 7 and f"{d:%A}".lower() == name


@pytest.mark.parametrize(
    "text, dates",
    [
        ("add a dentist appointment on January 5th", ["2027-01-05"]),  # not also "the 5th" of December
        ("pick up the dry cleaning tomorrow and book flights for 2026-12-20", ["2026-12-02", "2026-12-20"]),
        ("move the 3pm meeting to friday", ["2026-12-04"]),  # a time is not a date
        ("call mom next friday", ["2026-12-04", "2026-12-11"]),  # both readings
        ("buy 3 apples and 2 pears", []),
        ("thanks, that's all for now", []),
    ],
)
def test_the_dates_a_message_names(text, dates):
    assert sorted(d.isoformat() for d in dates_in(text, TODAY)) == dates


# ---------------------------------------------------------------- repeats


@pytest.mark.parametrize(
    "phrase, rule",
    [
        ("every monday", "FREQ=WEEKLY;BYDAY=MO"),
        ("every 2 weeks", "FREQ=WEEKLY;INTERVAL=2"),
        ("every other tuesday", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"),
        ("monthly on the 1st", "FREQ=MONTHLY;BYMONTHDAY=1"),
        ("every weekday", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
        ("every monday and thursday", "FREQ=WEEKLY;BYDAY=MO,TH"),
        ("daily", "FREQ=DAILY"),
        ("every 3 days", "FREQ=DAILY;INTERVAL=3"),
        ("yearly", "FREQ=YEARLY"),
        ("monthly on the 31st", "FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1"),
    ],
)
def test_repeat_phrases_become_rules(phrase, rule):
    assert parse_repeat(phrase) == rule


def test_an_unknown_repeat_lists_the_forms_understood():
    with pytest.raises(DateError, match="use one of: every day, every weekday"):
        parse_repeat("now and then")


@pytest.mark.parametrize(
    "rule, due, expected",
    [
        ("FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1", "2027-01-31", "2027-02-28"),  # month end: the last day
        ("FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1", "2027-02-28", "2027-03-31"),
        ("FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1", "2028-01-31", "2028-02-29"),  # leap year
        ("FREQ=MONTHLY;BYMONTHDAY=1", "2026-12-01", "2027-01-01"),  # across the year end
        ("FREQ=MONTHLY;BYMONTHDAY=-1", "2026-11-30", "2026-12-31"),
        ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-12-04", "2026-12-07"),  # Friday -> Monday
        ("FREQ=WEEKLY;INTERVAL=2", "2026-12-01", "2026-12-15"),
        ("FREQ=DAILY", "2027-03-27", "2027-03-28"),  # the night clocks go forward in Europe
        ("FREQ=DAILY", "2027-10-30", "2027-10-31"),  # and back
        ("FREQ=YEARLY", "2026-12-01", "2027-12-01"),
    ],
)
def test_the_next_date_of_a_rule(rule, due, expected):
    assert next_due(rule, dt.date.fromisoformat(due)).isoformat() == expected


def test_a_late_completion_skips_to_the_next_date_from_today_in_the_same_series():
    rule = "FREQ=WEEKLY;BYDAY=MO"
    assert next_due(rule, dt.date(2026, 11, 16), today=TODAY).isoformat() == "2026-12-07"


@given(
    rule=st.sampled_from(
        [parse_repeat(p) for p in ("every monday", "every weekday", "monthly on the 30th", "every 2 weeks", "daily")]
    ),
    due=st.dates(dt.date(2020, 1, 1), dt.date(2060, 1, 1)),
)
def test_a_next_date_is_always_later_and_fits_the_rule(rule, due):
    nxt = next_due(rule, due)
    assert nxt > due
    if "BYDAY=MO," in rule:
        assert nxt.weekday() < 5 and (nxt - due).days <= 3
    if rule == "FREQ=WEEKLY;BYDAY=MO":
        assert nxt.weekday() == 0
    if "BYMONTHDAY=30" in rule:
        assert nxt.day == 30 or (nxt + dt.timedelta(days=1)).day == 1


def test_completing_a_repeating_task_creates_the_next_and_lists_only_that(ctx, store):
    tid = run(
        ctx, "add_task", title="gym", due_date="2026-12-07", due_time="09:00", tags=["health"], repeat="every monday"
    )["added"]["id"]
    ctx.turn = "done-gym"
    r = run(ctx, "complete_task", id=tid)
    assert r["completed"]["status"] == "done" and r["next"]["due_date"] == "2026-12-14"
    assert r["next"] | {"id": 0} == {
        "id": 0,
        "title": "gym",
        "due_date": "2026-12-14",
        "status": "open",
        "due_time": "09:00",
        "tags": ["health"],
        "repeat": "every week on Mon",
    }
    listed = run(ctx, "list_tasks")["tasks"]
    assert [(t["title"], t["due_date"]) for t in listed] == [("gym", "2026-12-14")]
    done_at = store.conn().execute("SELECT completed_at FROM tasks WHERE id = ?", (tid,)).fetchone()[0]
    assert done_at and dt.datetime.fromisoformat(done_at)
    assert len(undo_last_turn(store)) == 2  # undo takes back both
    assert [(t["id"], t["status"]) for t in run(ctx, "list_tasks")["tasks"]] == [(tid, "open")]


def test_a_repeat_without_a_date_starts_at_its_first_occurrence(ctx):
    assert run(ctx, "add_task", title="standup", repeat="every weekday")["added"]["due_date"] == "2026-12-01"
    assert run(ctx, "add_task", title="bins", repeat="every friday")["added"]["due_date"] == "2026-12-04"


def test_describe_repeat_reads_well():
    assert describe_repeat("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR") == "every week on weekdays"
    assert describe_repeat("FREQ=MONTHLY;BYMONTHDAY=-1") == "every month on the last day"
    assert describe_repeat("FREQ=DAILY;INTERVAL=3") == "every 3 days"


@pytest.mark.parametrize(
    ("phrase", "first"),
    [
        ("every week", "2026-12-01"),
        ("every 2 weeks", "2026-12-01"),
        ("every year", "2026-12-01"),
        ("every monday", "2026-12-07"),
        ("every tuesday", "2026-12-01"),
        ("monthly on the 15th", "2026-12-15"),
        ("every weekend", "2026-12-05"),
    ],
)
def test_a_repeat_without_a_date_starts_today_when_its_rule_allows_today(phrase, first):
    assert first_due(parse_repeat(phrase), dt.date(2026, 12, 1)).isoformat() == first  # Tuesday
