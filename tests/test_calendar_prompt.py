"""The two-week calendar in the system prompt: read back, it names the fourteen days after today, each with
its weekday and the month named before it, for any today (calendar arithmetic from datetime is the oracle)."""

import datetime as dt
import re

from hypothesis import given
from hypothesis import strategies as st

from planner.prompts import system_prompt, two_weeks

MONTH = re.compile(r"^([A-Z][a-z]+) (\d{4}): (.+)$")
DAY = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d{1,2})(?: \(tomorrow\))?$")


def read_back(calendar: str) -> list[dt.date]:
    """The days the calendar names: each month named once, before its days."""
    days = []
    for part in calendar.split("; "):
        m = MONTH.match(part)
        assert m, part
        month = dt.datetime.strptime(m[1], "%B").month
        for entry in m[3].split(", "):
            e = DAY.match(entry)
            assert e, entry
            d = dt.date(int(m[2]), month, int(e[2]))
            assert d.strftime("%a") == e[1]
            days.append(d)
    return days


@given(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2099, 12, 1)))
def test_the_calendar_names_the_fourteen_days_after_today_with_their_weekdays(today):
    calendar = two_weeks(today)
    assert read_back(calendar) == [today + dt.timedelta(days=n) for n in range(1, 15)]
    tomorrow = today + dt.timedelta(days=1)
    assert calendar.startswith(f"{tomorrow:%B %Y}: {tomorrow:%a} {tomorrow.day} (tomorrow)")
    assert calendar.count("tomorrow") == 1


def test_today_is_written_in_full_and_the_calendar_follows():
    line = system_prompt(dt.date(2026, 12, 25), ("read",)).splitlines()[1]
    assert line == (
        "Today is Friday, 2026-12-25. The next two weeks: December 2026: Sat 26 (tomorrow), Sun 27, Mon 28, Tue 29, "
        "Wed 30, Thu 31; January 2027: Fri 1, Sat 2, Sun 3, Mon 4, Tue 5, Wed 6, Thu 7, Fri 8."
    )
