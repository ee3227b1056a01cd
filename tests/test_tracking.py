"""Tracked time: start and stop (tools, shell, /commands), undo, what `tasks`, the agenda and the plan show, the
exports, and estimates that learn from it, checked on generated histories against a plain sum."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3

import icalendar
from helpers import TODAY, clean_env, run, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.storage import worklog
from planner.storage.worklog import Finished
from planner.tools import dispatch, estimates
from planner.tools.undo import undo_newest


def at(ctx, hhmm: str, turn: str):
    """The context at a moment of today, in a turn of its own."""
    h, m = map(int, hhmm.split(":"))
    return dataclasses.replace(ctx, plan_from=dt.datetime.combine(TODAY, dt.time(h, m)), turn=turn)


def test_start_stop_spent_and_one_clock_at_a_time(ctx, store):
    run(ctx, "add_task", title="write the report", estimate="2h")
    run(ctx, "add_task", title="email Ana", estimate="15m")
    started = run(at(ctx, "09:00", "t1"), "start_task", id=1)
    assert started == {"started": {"id": 1, "title": "write the report", "from": "2026-12-01 09:00"}}
    again = run(at(ctx, "09:10", "t2"), "start_task", id=1)
    assert again["note"] == "the clock was already running on it"
    switched = run(at(ctx, "10:30", "t3"), "start_task", id=2)  # another task: the first one stops
    assert switched["stopped"] == {
        "id": 1,
        "title": "write the report",
        "from": "2026-12-01 09:00",
        "to": "2026-12-01 10:30",
        "spent": "1h30m",
    }
    stopped = run(at(ctx, "10:45", "t4"), "stop_task")
    assert stopped["stopped"]["spent"] == "15m" and stopped["spent_in_all"] == "15m"
    said = run(at(ctx, "15:00", "t5"), "stop_task", id=1, took="an hour")  # the clock did not run: what was said
    assert said["stopped"]["spent"] == "1h" and said["spent_in_all"] == "2h30m" and said["estimate"] == "2h"
    assert worklog.spent(store.conn(), [1, 2]) == {1: 150, 2: 15}


def test_errors_say_what_to_do(ctx):
    run(ctx, "add_task", title="report")
    for name, args, words in [
        ("stop_task", {}, "no task is running"),
        ("stop_task", {"id": 1}, "is not running; give took"),
        ("stop_task", {"id": 1, "took": "ages"}, "took:"),
        ("start_task", {"id": 9}, "no task with id=9"),
    ]:
        out, ok = dispatch(ctx, name, args)
        assert not ok and words in out["error"], (name, out)
    run(ctx, "complete_task", id=1)
    out, ok = dispatch(ctx, "start_task", {"id": 1})
    assert not ok and "reopen_task" in out["error"]


def test_undo_takes_back_a_start_and_a_stop(ctx, store):
    run(ctx, "add_task", title="report")
    run(at(ctx, "09:00", "a"), "start_task", id=1)
    run(at(ctx, "10:00", "b"), "stop_task")
    assert undo_newest(ctx).lines == ['task 1 "report" runs again, from 09:00']
    assert worklog.running(store.conn()).task_id == 1
    assert undo_newest(ctx).lines == ['removed the time on task 1 "report" from 09:00']
    assert worklog.running(store.conn()) is None and worklog.spent(store.conn(), [1]) == {}


def test_the_plan_starts_the_running_task_now_for_what_is_left_and_says_so(ctx, store):
    run(ctx, "add_task", title="write the report", estimate="2h")
    run(ctx, "add_task", title="email Ana", estimate="30m")
    run(at(ctx, "09:00", "s"), "start_task", id=1)
    p = run(at(ctx, "09:40", "p"), "plan_day")
    first = p["blocks"][0]
    assert (first["title"], first["start"][11:], first["end"][11:]) == ("write the report", "09:40", "11:00")
    assert first["running"] and first["spent"] == "40m" and first["why"] == "running now"
    assert p["running"] == 1 and p["now"] == "2026-12-01T09:40"


def test_tasks_and_the_agenda_show_what_runs_and_the_time_spent(tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat(), COLUMNS="100")
    run_cli(["add", "write", "the", "report", "today", "~2h"], env)
    run_cli(["add", "email", "Ana", "today"], env)
    assert (
        run_cli(["start", "1", "--now", "2026-12-01 09:00"], env).stdout == "started 1  write the report  since 09:00\n"
    )
    stop = run_cli(["stop", "--now", "2026-12-01 10:30"], env)
    assert stop.stdout == "stopped 1  write the report  09:00-10:30  1h30m (1h30m in all, estimate ~2h)\n"
    run_cli(["start", "2", "--now", "2026-12-01 10:30"], env)
    tasks = run_cli(["tasks", "--now", "2026-12-01 10:50"], env).stdout
    assert "(1h30m spent)" in tasks.splitlines()[1] and "(running since 10:30, 20m spent)" in tasks.splitlines()[2]
    agenda = run_cli(["agenda", "--now", "2026-12-01 10:50"], env).stdout
    assert "running: 2  running since 10:30, 20m spent" in agenda and "(1h30m spent)" in agenda
    took = run_cli(["stop", "1", "--took", "45m", "--now", "2026-12-01 16:00"], env)
    assert took.returncode == 0 and "45m (2h15m in all" in took.stdout
    bad = run_cli(["stop", "1", "--now", "2026-12-01 16:00"], env)
    assert bad.returncode == 1 and bad.stderr.startswith("error: task 1")


def test_slash_start_and_stop_in_a_session(fake, tmp_path):
    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY=TODAY.isoformat(), OLLAMA_HOST=fake.url)
    run_cli(["add", "report"], env)
    models = ["--model", "main", "--critic-model", "critic", "--embed-model", "embed"]
    p = run_cli([*models, "--now", "2026-12-01 09:00"], env, "/start 1\n/stop\n/undo\n/stop 1 2h\n")
    assert "started report, since 09:00" in p.stdout and "stopped report: 0m (0m in all)" in p.stdout
    assert 'task 1 "report" runs again, from 09:00' in p.stdout and "stopped report: 0m" in p.stdout
    assert not fake.chats("main")


def test_the_exports_carry_the_worklog(ctx, store):
    from planner.storage import exchange

    run(ctx, "add_task", title="report")
    run(ctx, "add_task", title="slides")
    run(at(ctx, "09:00", "a"), "start_task", id=1)
    run(at(ctx, "11:00", "b"), "start_task", id=2)  # stops the report
    data = json.loads(exchange.export(store, "json"))
    assert data["tasks"][0]["worklog"] == [{"start": "2026-12-01T09:00", "end": "2026-12-01T11:00", "minutes": 120}]
    assert data["tasks"][1]["worklog"] == [{"start": "2026-12-01T11:00", "end": None, "minutes": 0}]
    cal = icalendar.Calendar.from_ical(exchange.export(store, "ics"))
    todos = {str(t["summary"]): t for t in cal.walk("VTODO")}
    assert str(todos["report"]["x-planner-worked"]) == "20261201T0900/20261201T1100"
    assert todos["report"]["x-planner-worked"].params["MINUTES"] == "120"
    tw = [json.loads(line.rstrip(",")) for line in exchange.export(store, "taskwarrior").splitlines()[1:-1]]
    assert tw[1]["start"] == "20261201T110000Z" or tw[1]["start"].startswith("2026")
    assert tw[0]["annotations"][-1]["description"] == "worked 2026-12-01 09:00-11:00 (2h)"


# ---------------------------------------------------------------- estimates that learn


@st.composite
def histories(draw):
    """Finished tasks, newest first, with tags and lists from small sets, estimates and tracked minutes."""
    n = draw(st.integers(0, 30))
    out = []
    for i in range(n):
        tags = tuple(sorted(draw(st.sets(st.sampled_from(["writing", "email", "calls"]), max_size=2))))
        out.append(
            Finished(
                i,
                tags,
                draw(st.sampled_from([None, "work", "home"])),
                draw(st.sampled_from([15, 30, 60, 120, 240])),
                draw(st.integers(5, 600)),
                f"2026-11-{30 - i % 29:02d}",
            )
        )
    return out


def oracle(history: list[Finished], key: str) -> float | None:
    """The ratio for one tag or list, by hand: the last 10 finished with it, at least 3, tracked over estimated."""
    mine = [f for f in history if (key[1:] in f.tags if key[0] == "+" else f.list_name == key[1:])][:10]
    if len(mine) < 3:
        return None
    return min(max(sum(f.tracked for f in mine) / sum(f.estimate for f in mine), 0.25), 4.0)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(histories())
def test_learned_ratios_are_tracked_over_estimated_for_the_last_ten_of_each_tag_and_list(history):
    got = estimates.ratios(history)
    for key in ("+writing", "+email", "+calls", "#work", "#home"):
        want = oracle(history, key)
        assert (key in got) == (want is not None), key
        if want is not None:
            assert abs(got[key].ratio - want) < 1e-9 and got[key].tasks == min(10, got[key].tasks)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    histories(), st.sets(st.sampled_from(["writing", "email", "calls"]), max_size=2), st.sampled_from([None, "work"])
)
def test_a_task_is_corrected_by_the_ratio_with_the_most_tasks_behind_it_and_only_when_it_says_something(
    history, tags, ls
):
    known = estimates.ratios(history)
    r = estimates.correction(tuple(tags), ls, known)
    keys = [f"+{t}" for t in tags] + ([f"#{ls}"] if ls else [])
    telling = [known[k] for k in keys if k in known and abs(known[k].ratio - 1) >= 0.1]
    if not telling:
        assert r is None
    else:
        assert r is not None and r.tasks == max(x.tasks for x in telling)
        planned = estimates.corrected(60, r)
        assert planned % 5 == 0 and planned >= 60 * r.ratio - 1e-9 and planned < 60 * r.ratio + 5


def test_the_plan_corrects_estimates_from_tracked_time_says_so_and_a_setting_turns_it_off(ctx, store):
    for i in range(3):  # three finished writing tasks that took 1.4 times their two hours
        tid = run(ctx, "add_task", title=f"essay {i}", estimate="2h", tags=["writing"])["added"]["id"]
        run(at(ctx, "09:00", f"s{i}"), "stop_task", id=tid, took="2 hours 48 minutes")
        run(ctx, "complete_task", id=tid)
    run(ctx, "add_task", title="chapter", estimate="2h", tags=["writing"])
    run(ctx, "add_task", title="email", estimate="30m")
    blocks = {b["title"]: b for b in run(ctx, "plan_day")["blocks"]}
    chapter = blocks["chapter"]
    assert (chapter["start"][11:], chapter["end"][11:]) == ("09:00", "11:50")
    assert chapter["estimate"] == "your +writing tasks run 1.4× their estimate: planned 2h50m for ~2h"
    assert "estimate" not in blocks["email"]
    off = run(dataclasses.replace(ctx, learn_estimates=False), "plan_day")
    chapter = next(b for b in off["blocks"] if b["title"] == "chapter")
    assert (chapter["end"][11:], "estimate" in chapter) == ("11:00", False)
    from planner.ui.views import plan_text

    text = plan_text(ctx, None, room=120)
    assert "estimates from tracked time (PLANNER_LEARN_ESTIMATES=0 turns this off):" in text
    assert "your +writing tasks run 1.4× their estimate: planned 2h50m for ~2h" in text


def test_undone_start_and_stop_are_made_again_by_redo_with_their_time(tmp_path):
    """Undo of a stop sets the clock running again; redo puts the stop back with its minutes, not lost."""
    from helpers import clean_env, run_cli

    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    for argv in (["add", "write", "report"], ["start", "1"], ["stop", "--took", "30m"], ["add", "call", "Bo"]):
        assert run_cli(argv, env).returncode == 0
    for _ in range(3):
        assert run_cli(["undo", "--yes"], env).returncode == 0
    redone = [run_cli(["redo", "--yes"], env).stdout for _ in range(4)]
    assert "made again, running" in redone[0] and "made again, 30m" in redone[1], redone
    assert "call Bo" in redone[2] and "nothing to redo" in redone[3], redone
    db = sqlite3.connect(tmp_path / "planner.db")
    assert db.execute("SELECT minutes, end IS NOT NULL, undone_at FROM worklog").fetchall() == [(30, 1, None)]
    db.close()
    assert run_cli(["undo", "--yes"], env).returncode == 0  # and undone again, it is the newest request again
    assert "call Bo" in run_cli(["redo", "--yes"], env).stdout


def test_redo_does_not_put_tracked_time_back_over_a_change_made_since(tmp_path):
    from helpers import clean_env, run_cli

    env = clean_env(PLANNER_HOME=str(tmp_path), PLANNER_TODAY="2026-12-03")
    for argv in (["add", "write", "report"], ["start", "1"], ["stop", "--took", "30m"], ["undo", "--yes"]):
        assert run_cli(argv, env).returncode == 0
    assert run_cli(["stop", "--took", "45m"], env).returncode == 0  # stopped again, by the user, since
    redo = run_cli(["redo", "--yes"], env)
    assert "changed after the undo" in redo.stdout + redo.stderr, redo.stdout + redo.stderr
    db = sqlite3.connect(tmp_path / "planner.db")
    assert [r[0] for r in db.execute("SELECT minutes FROM worklog")] == [45]
    db.close()
