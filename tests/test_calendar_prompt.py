"""The two-week calendar in the system prompt: read back, it names the fourteen days after today, each with
its weekday, for any today (calendar arithmetic from datetime is the oracle)."""

import datetime as dt
import re

from hypothesis import given
from hypothesis import strategies as st

from planner.prompts import system_prompt, two_weeks

ENTRY = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d{1,2})(?: \(tomorrow\))?(?: ([A-Z][a-z]+) (\d{4}))?$")


def read_back(calendar: str) -> list[dt.date]:
    """The days the calendar names: each month's days get the month and year written after its last one."""
    days, pending = [], []
    for entry in calendar.split(", "):
        m = ENTRY.match(entry)
        assert m, entry
        pending.append((m[1], int(m[2])))
        if m[3]:
            month = dt.datetime.strptime(m[3], "%B").month
            for weekday, day in pending:
                d = dt.date(int(m[4]), month, day)
                assert d.strftime("%a") == weekday
                days.append(d)
            pending = []
    assert not pending  # every day's month is said
    return days


@given(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2099, 12, 1)))
def test_the_calendar_names_the_fourteen_days_after_today_with_their_weekdays(today):
    calendar = two_weeks(today)
    assert read_back(calendar) == [today + dt.timedelta(days=n) for n in range(1, 15)]
    tomorrow = today + dt.timedelta(days=1)
    assert calendar.startswith(f"{tomorrow:%a} {tomorrow.day} (tomorrow)") and calendar.count("tomorrow") == 1


def test_today_is_written_in_full_and_the_calendar_follows():
    line = system_prompt(dt.date(2026, 12, 25), ("read",)).splitlines()[1]
    assert line == (
        "Today is Friday, 2026-12-25. The next two weeks: Sat 26 (tomorrow), Sun 27, Mon 28, Tue 29, Wed 30, "
        "Thu 31 December 2026, Fri 1, Sat 2, Sun 3, Mon 4, Tue 5, Wed 6, Thu 7, Fri 8 January 2027."
    )
