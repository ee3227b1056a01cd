"""What issue 34 asked of a turn, through Agent.run_turn on the scripted model: the tools a request needs,
a tool not sent, a request for a change that made none, replies that are no sentences, the context's
limits, the critic's one verdict, and the five-request session from the issue."""

import json

import pytest
from conftest import call, tasks
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.agent.budget import MAX_CALLS, Window, trimmed
from planner.agent.critic import Verdict
from planner.agent.replies import unshowable
from planner.prompts import CONTEXT_FULL, NUDGE, NUDGE_DONE, REPHRASE
from planner.tools import TOOLS
from planner.ui.commands import Stats, run_command

NAMES = set(TOOLS)


def sent(model, n=0):
    """The tool names the n-th main-model call was sent."""
    return {t["function"]["name"] for t in model.chats("main")[n]["tools"]}


def group(name):
    return {n for n, t in TOOLS.items() if t.group == name}


# ---------------------------------------------------------------- the tools a request needs


def test_a_request_gets_its_groups_and_a_question_gets_no_write_tools(model, make_agent):
    model.script("main", {"content": "You have nothing."}, {"tool_calls": [call("add_task", title="milk")]})
    model.script("main", {"content": "Added milk."})
    agent = make_agent(reflect=False)
    agent.run_turn("what's on my list?")
    assert sent(model, 0) == group("read")
    agent.run_turn("add milk")
    assert sent(model, 1) == group("read") | group("add") == group("read") | {"add_task"}
    assert not (group("memory") | group("change")) & sent(model, 1)


def test_a_tool_not_sent_gets_an_error_naming_it_and_the_next_step_sends_its_group(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("plan_day", date="tomorrow")]},  # "hello" got no planning tools
        {"tool_calls": [call("plan_day", date="tomorrow")]},
        {"content": "Tomorrow is free."},
    )
    r = make_agent(reflect=False).run_turn("hello")
    first = r.tool_calls[0]
    assert not first["ok"] and "plan_day was not among the tools" in first["result"]["error"]
    assert "plan_day" not in sent(model, 0) and "plan_day" in sent(model, 1)
    assert r.tool_calls[1]["ok"] and r.reply == "Tomorrow is free."
    assert "model asked for a tool" in r.steps[1]["why"]


def test_an_invented_tool_is_answered_with_the_real_one_and_never_with_the_tool_list(model, make_agent):
    model.script(
        "main", {"tool_calls": [call("rename_task", id=1, title="oat milk")]}, {"content": "Which task do you mean?"}
    )
    r = make_agent(reflect=False).run_turn("hello")
    error = r.tool_calls[0]["result"]["error"]
    assert "Use update_task instead" in error and "list_lists" not in error  # not the whole internal list
    assert "update_task" in sent(model, 1)


def test_all_tools_are_sent_when_asked_for(model, make_agent):
    model.script("main", {"content": "Hi."})
    make_agent(tool_groups="all").run_turn("hello")
    assert sent(model) == NAMES - {"lookup"}


def test_trace_shows_the_groups_of_each_call_and_why(model, make_agent):
    model.script("main", {"tool_calls": [call("add_task", title="milk")]}, {"content": "Added milk."})
    agent = make_agent(reflect=False)
    stats = Stats()
    stats.add(agent.run_turn("add milk"))
    text = run_command(agent, "/trace", stats)
    assert 'add (the words ask: "add")' in text and "read (always)" in text
    assert 'add_task(title="milk") ✓' in text and text.count("model call") == 2


# ---------------------------------------------------------------- a write that hits the task meant


@pytest.mark.parametrize(
    ("said", "copy", "right"),
    [
        ("I bought the milk", call("add_task", title="Buy milk."), call("complete_task", id=1)),
        (
            "push the car service to tomorrow",
            call("add_task", title="car  service"),
            call("update_task", id=2, due_date="tomorrow"),
        ),
    ],
)
def test_a_new_task_copying_an_open_one_the_user_did_not_ask_to_add_is_not_added(
    model, make_agent, ctx, said, copy, right
):
    """What the real 1.5B did (docs/evals.md): a copy where the user meant the task they have."""
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    dispatch(ctx, "add_task", {"title": "car service", "due_date": "2026-12-09"})
    model.script("main", {"tool_calls": [copy]}, {"tool_calls": [right]}, {"content": "Done."})
    r = make_agent(reflect=False).run_turn(said)
    refused = r.tool_calls[0]
    assert not refused["ok"] and "is already open" in refused["result"]["error"]
    assert f"id {right['arguments']['id']}" in refused["result"]["error"]  # names the one to use
    assert r.tool_calls[1]["ok"] and len(tasks(ctx.store)) == 2  # no copy; the one meant was changed


def test_a_second_task_of_the_same_title_is_added_when_the_user_asks_to_add_it(model, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    model.script("main", {"tool_calls": [call("add_task", title="buy milk")]}, {"content": "Added."})
    r = make_agent(reflect=False).run_turn("add buy milk again, for the office")
    assert r.tool_calls[0]["ok"] and len(tasks(ctx.store)) == 2


def two_calls(ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "call mom"})
    dispatch(ctx, "add_task", {"title": "call dad"})


def test_a_write_to_one_of_two_tasks_the_words_fit_alike_is_not_run_and_the_user_is_asked_which(model, make_agent, ctx):
    """What the real 1.5B did with "mark the call as done" (docs/evals.md): it completed "call mom"."""
    two_calls(ctx)
    model.script("main", {"tool_calls": [call("complete_task", id=1)]}, {"content": 'I completed "call mom".'})
    r = make_agent(reflect=False).run_turn("mark the call as done")
    assert [t["status"] for t in tasks(ctx.store)] == ["open", "open"]
    error = r.tool_calls[0]["result"]["error"]
    assert 'task 1 "call mom"' in error and 'task 2 "call dad"' in error
    assert r.reply == 'Which one do you mean: "call mom" or "call dad"? Nothing was changed yet.'


@pytest.mark.parametrize(
    "said, ids",
    [
        ("mark call dad as done", [2]),  # a title's own words say which
        ("I called mum and dad, mark both calls done", [1, 2]),  # the plural says both
        ("mark the call to dad as done", [2]),
    ],
)
def test_words_that_say_which_task_write_to_it(model, make_agent, ctx, said, ids):
    two_calls(ctx)
    model.script("main", {"tool_calls": [call("complete_task", id=i) for i in ids]}, {"content": "Done."})
    r = make_agent(reflect=False).run_turn(said)
    assert all(c["ok"] for c in r.tool_calls), r.tool_calls
    assert [t["status"] for t in tasks(ctx.store)] == ["done" if i + 1 in ids else "open" for i in range(2)]


def test_the_models_own_question_stands(model, make_agent, ctx):
    two_calls(ctx)
    model.script("main", {"tool_calls": [call("complete_task", id=2)]}, {"content": "Did you mean mom or dad?"})
    r = make_agent(reflect=False).run_turn("tick off the call")
    assert r.reply == "Did you mean mom or dad?" and not r.tool_calls[0]["ok"]


# ---------------------------------------------------------------- a request for a change that made none


def test_a_request_that_ends_with_no_call_is_asked_once_more_with_a_nudge(model, small, make_agent, store):
    model.script(
        "main",
        {"content": "To add a task for the quarterly report, it will take about 2 hours, due Thursday."},
        {"tool_calls": [call("add_task", title="write the quarterly report", due_date="thursday")]},
        {"content": "Added the quarterly report, due Thursday."},
    )
    r = make_agent(reflect=False).run_turn("add write the quarterly report, due thursday")
    assert r.nudged and [t["title"] for t in tasks(store)] == ["write the quarterly report"]
    nudge = model.chats("main")[1]["messages"][-1]
    assert nudge == {"role": "user", "content": NUDGE.format(done=NUDGE_DONE["add"])}
    assert r.reply == "Added the quarterly report, due Thursday." and r.correction is None


def test_still_nothing_done_is_said_plainly_under_the_reply(model, small, make_agent, store):
    model.script("main", {"content": "To find time tomorrow, I need to know your tasks."}, {"content": "Sure."})
    r = make_agent(reflect=False).run_turn("find me some time tomorrow for reading")
    assert r.nudged and r.correction == "No plan was made."
    assert "find_time" in sent(model, 1)  # the nudge came with the group that does it


def test_a_question_back_or_a_refusal_is_no_miss(model, make_agent, store):
    model.script("main", {"content": "What should the task say?"})
    r = make_agent(reflect=False).run_turn("add a task")
    assert not r.nudged and r.correction is None and len(model.chats("main")) == 1


def test_a_tool_error_is_never_the_reply(model, small, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("complete_task", id=12345)]},
        {"content": "complete_task failed: no task with id=12345; call list_tasks to see the ids"},
    )
    r = make_agent(reflect=False).run_turn("mark the milk as done")
    assert r.reply == "That did not work, so nothing was changed."
    assert r.correction == "Nothing was changed." and not r.nudged  # the call was tried: no second ask


# ---------------------------------------------------------------- replies are sentences (the issue's, as data)

ISSUE_REPLIES = [
    "…ask, reopen_task, delete_task, list_lists, rename_list, plan_day, find_time, schedule_task",
    '{"status": "open", "count": 2, "tasks": [{"id": 1, "title": "buy milk", "due_date": null, "status": "open"}]}',
    '<tools>\n  <function name="add_task" arguments=\'{"title": "Shellfish allergy", "priority": "high"}\'/>\n</tools>',
    '```json\n{"name": "list_tasks", "arguments": {}}\n```',
]


@pytest.mark.parametrize("reply", ISSUE_REPLIES)
def test_the_replies_from_the_issue_are_not_shown_as_they_are(reply):
    assert unshowable(reply, NAMES) is not None
    assert unshowable("Added buy milk, due tomorrow.", NAMES) is None


@pytest.mark.parametrize("reply", ISSUE_REPLIES[:2])  # (markup that reads as a call runs as one: test_markup.py)
def test_a_reply_that_is_no_sentence_is_rebuilt_from_the_results(model, make_agent, store, reply):
    model.script("main", {"tool_calls": [call("list_tasks")]}, {"content": reply})
    r = make_agent(reflect=False).run_turn("what's on my list this week?")
    assert r.reply == "You have no open tasks." and unshowable(r.reply, NAMES) is None


def test_without_results_the_model_is_asked_once_more(model, make_agent):
    model.script("main", {"content": ISSUE_REPLIES[0]}, {"content": "I can add, change and plan your tasks."})
    r = make_agent(reflect=False).run_turn("what can you do")
    assert r.reply == "I can add, change and plan your tasks."
    assert model.chats("main")[1]["messages"][-1]["content"] == REPHRASE


# Replies of the real 1.5B that said what it would do instead of doing it (docs/evals.md)
PROMISES = [
    "I will list all tasks.",
    "To add a task for the quarterly report, it will take about 2 hours, due Thursday.",
    "To plan my day tomorrow, I need to know what tasks I have planned.",
    "Sure! Let me check your list",
    "I'm going to show you your tasks for this week.",
    "I will summarize the upcoming tasks for the week.",  # session-week, "what's coming up this week?"
    "I will rename the milk task to buy oat milk.",  # session-oat-milk, after rename_list failed
]
ANSWERS = [
    "I'll remember that your sister Ana lives in Lisbon.",
    "Let me know if you need anything else!",
    "I can't find a task about the dentist.",
    "To do that, tell me which task you mean?",
    "You have two open tasks: buy milk and call mum.",
    # (from a review: a question back to the user, or what the user can do, is an answer)
    "Sure, I can set that up: what time?",
    "I'll add it for friday or saturday, which do you prefer?",
    "I can see two tasks: buy milk and call mom.",
    "To add a task, just tell me its title.",
    "I'll be here if you need anything.",
]


@pytest.mark.parametrize("reply", PROMISES)
def test_a_promise_instead_of_an_answer_is_said_from_the_results(model, make_agent, ctx, reply):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    assert unshowable(reply, NAMES) is not None
    model.script("main", {"tool_calls": [call("list_tasks")]}, {"content": reply})
    r = make_agent(reflect=False).run_turn("what's on my list?")
    assert "buy milk" in r.reply and r.reply != reply


@pytest.mark.parametrize("reply", ANSWERS)
def test_an_answer_or_a_fact_acknowledged_is_shown_as_it_is(reply):
    assert unshowable(reply, NAMES) is None


def test_a_promise_with_no_call_made_is_asked_once_more_to_do_it(model, make_agent, ctx):
    from planner.prompts import PROMISED
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    model.script(
        "main", {"content": "I will list all tasks."}, {"tool_calls": [call("list_tasks")]}, {"content": "Buy milk."}
    )
    r = make_agent(reflect=False).run_turn("what's on my list?")
    assert model.chats("main")[1]["messages"][-1]["content"] == PROMISED
    assert r.reply == "Buy milk."


# ---------------------------------------------------------------- the context


def test_calls_beyond_the_cap_in_one_reply_do_not_run(model, make_agent, store):
    many = [call("add_task", title=f"task {i}") for i in range(MAX_CALLS + 11)]
    model.script("main", {"tool_calls": many}, {"content": "Added some."})
    r = make_agent(reflect=False).run_turn("add them")
    assert len(tasks(store)) == MAX_CALLS
    assert all("at most" in c["result"]["error"] for c in r.tool_calls[MAX_CALLS:])


def test_a_turn_ends_with_a_sentence_before_the_context_is_full(model, make_agent, store):
    model.contexts["main"] = 2048  # the server says the model holds 2,048 tokens (less than num_ctx)
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="milk")], "prompt_eval_count": 1000},
        {"tool_calls": [call("list_tasks")], "prompt_eval_count": 1100},
        {"content": "never asked"},
    )
    r = make_agent(reflect=False, num_predict=1024).run_turn("add milk")
    assert r.context_full and r.reply.endswith(CONTEXT_FULL) and "milk" in r.reply
    assert len(model.chats("main")) == 1 and r.error is None


def test_a_long_result_is_trimmed_for_the_model_and_says_so():
    result = {"status": "open", "count": 500, "tasks": [{"id": i, "title": f"task {i}" * 5} for i in range(500)]}
    cut = trimmed(result, 4000)
    assert len(json.dumps(cut)) <= 4000 and cut["tasks"] == result["tasks"][: len(cut["tasks"])]
    assert cut["left_out"] == f"{500 - len(cut['tasks'])} more tasks not shown"
    assert trimmed({"a": 1}) == {"a": 1}


def test_the_window_counts_from_the_servers_figure():
    w = Window(size=8192, reply_room=1024)
    messages = [{"role": "user", "content": "x" * 300}]
    assert w.fits(messages, [])  # nothing counted yet: the history budget already made it fit
    w.saw(7500, messages, [])
    assert w.fits(messages, []) is False  # 7,500 + room for the reply is past 8,192
    w.saw(1000, messages, [])
    assert w.fits([*messages, {"role": "tool", "content": "y" * 3000}], [])


# ---------------------------------------------------------------- the critic's verdict


@pytest.mark.parametrize(
    "said, verdict",
    [
        ('{"critique": "", "done": true}', Verdict(True, "", True)),
        ('{"critique": "not fully and correctly carried out", "done": true}', Verdict(True, "", True)),
        ('{"critique": "", "done": false}', Verdict(True, "", True)),
        ('{"critique": "eggs were not added", "done": false}', Verdict(False, "eggs were not added", True)),
        ('{"critique": "cut', Verdict(True, "", True)),
    ],
)
def test_the_critic_gives_one_typed_verdict(model, make_agent, said, verdict):
    agent = make_agent()
    model.script("critic", {"content": said, "done_reason": "length" if said.endswith("cut") else "stop"})
    assert agent.critic.check(agent.today(), "add eggs", [], "Added eggs.") == verdict


# ---------------------------------------------------------------- the five-request session from the issue

SESSION = [
    "I have a dentist appointment friday at 3pm",
    "add write the quarterly report, it will take about 2 hours, due thursday",
    "plan my day tomorrow",
    "what do you know about me?",
    "actually move the report to friday",
]


def test_the_five_request_session_as_the_1_5b_answered_it(model, small, make_agent, store):
    # The 1.5B's replies from the issue: the event, then four restatements with no call (and no better on
    # the one more ask). Each request that asked for a change is asked once more; the add, the plan of a day
    # and the move of the one task named, which one tool each carries out, are then asked for as that
    # tool's arguments, and run.
    model.script(
        "main",
        {"tool_calls": [call("add_event", title="Dentist appointment", when="friday 3pm")]},
        {"content": "Added the dentist appointment on Friday at 3pm."},
        {"content": "To add a task for the quarterly report, it will take about 2 hours, due Thursday."},
        {"content": "To add a task for the quarterly report, it will take about 2 hours, due Thursday."},
        {"content": '{"title": "Write the quarterly report", "due_date": "thursday"}'},  # asked for the arguments
        {"content": "To add a task for the quarterly report."},
        {"content": "To plan my day tomorrow, I need to know what tasks I have planned."},
        {"content": "To plan my day tomorrow, I need to know what tasks I have planned."},
        {"content": '{"date": "tomorrow"}'},  # asked for the day to plan
        {"content": "To plan my day tomorrow."},
        {"content": "I know that you have a dentist appointment on Friday."},
        {"content": "To move the report to Friday."},
        {"content": "To move the report to Friday."},
        {"content": '{"id": 1, "due_date": "friday"}'},  # asked for the new date of the task the words name
        {"content": "To move the report."},
    )
    agent = make_agent(reflect=False)
    results = [agent.run_turn(line) for line in SESSION]
    assert [r.nudged for r in results] == [False, True, True, False, True]
    assert [r.forced for r in results] == [None, "add_task", "plan_day", None, "update_task"]  # one tool each
    assert results[1].reply == 'Added "Write the quarterly report" (id 1, due 2026-12-03).'
    assert [r.correction for r in results] == [None] * 5
    assert "add" in results[1].steps[0]["groups"] and "plan" in results[2].steps[0]["groups"]
    assert "memory" in results[3].steps[0]["groups"] and "change" not in results[3].steps[0]["groups"]
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("Write the quarterly report", "2026-12-04")]


def test_a_forced_call_cut_short_changes_nothing_and_says_so(model, small, make_agent, store):
    said = "I will add the report."
    model.script("main", {"content": said}, {"content": said}, {"content": '{"title": "Wri', "done_reason": "length"})
    r = make_agent(reflect=False).run_turn("add write the report")
    assert r.forced == "add_task" and tasks(store) == [] and r.correction == "Nothing was added."


def test_the_five_request_session_done_right(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_event", title="Dentist appointment", when="friday 3pm")]},
        {"content": "Added the dentist on Friday at 3pm."},
        {"tool_calls": [call("add_task", title="Write the quarterly report", due_date="thursday", estimate="2 hours")]},
        {"content": "Added the quarterly report, due Thursday."},
        {"tool_calls": [call("plan_day", date="tomorrow")]},
        {"content": "Tomorrow: the quarterly report from 9:00 to 11:00."},
        {"content": "You have a dentist appointment on Friday at 3pm."},
        {"tool_calls": [call("update_task", id=1, due_date="friday")]},
        {"content": "Moved the report to Friday."},
    )
    agent = make_agent(reflect=False)
    results = [agent.run_turn(line) for line in SESSION]
    assert not any(r.nudged or r.correction for r in results)
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("Write the quarterly report", "2026-12-04")]
    assert results[2].tool_calls[0]["ok"] and results[2].tool_calls[0]["name"] == "plan_day"


def wrong_task_deletion(model, make_agent, ctx, store):
    """The issue's: "Delete the task about calling mum" with --yes, and the model deleting "buy milk"."""
    with store.write() as conn:
        conn.executemany("INSERT INTO tasks (title) VALUES (?)", [("buy milk",), ("call mum",)])
    ctx.yes = True  # --yes: the user said yes in advance
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": 'I deleted the task "buy milk".'})
    return make_agent(reflect=False, yes=True).run_turn("Delete the task about calling mum")


def test_a_deletion_of_a_task_the_words_do_not_name_does_not_run(model, make_agent, ctx, store):
    r = wrong_task_deletion(model, make_agent, ctx, store)
    assert [t["title"] for t in tasks(store)] == ["buy milk", "call mum"]  # --yes covers what the words name
    assert not r.tool_calls[0]["ok"] and r.correction == "Nothing was changed."  # the claim is not shown as true


def test_the_refusal_names_the_task_the_words_fit(model, make_agent, ctx, store):
    # (issue 34 point 3, built on main beside this: the reading the gate's --yes goes by, planner/agent/intent.py)
    r = wrong_task_deletion(model, make_agent, ctx, store)
    assert "call mum" in r.tool_calls[0]["result"]["error"]


WORD = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=8)


@settings(max_examples=60)
@given(
    st.lists(WORD, min_size=1, max_size=4),
    st.lists(st.sampled_from([" ", "  ", ", ", " - ", ". "]), min_size=4, max_size=4),
    st.sampled_from(["", ".", "!", " "]),
    st.booleans(),
    st.sampled_from(["I bought it", "push it to tomorrow", "done with that", "moved it to friday"]),
    st.sampled_from(["add it again", "remind me to do it", "I need to do it again", "create a second one"]),
)
def test_any_spelling_of_an_open_tasks_title_is_a_copy_unless_the_user_asks_to_add(
    words, gaps, end, upper, unasked, asked
):
    """The property over generated titles: a title that is an open task's words in any case, spacing or
    punctuation is refused with the open task named when the message does not ask to add, and goes through
    when it does."""
    from planner.agent.guards import Guards
    from planner.agent.turn import ToolCall, Turn

    title = " ".join(words)
    spelt = words[0] + "".join(g + w for g, w in zip(gaps, words[1:], strict=False)) + end  # spaces, stops
    spelt = spelt.upper() if upper else spelt
    copy = ToolCall("add_task", {"title": spelt})
    Guards("standard").screen(copy, Turn(text=unasked, open_titles={7: title}))
    assert copy.refusal and 'task 7 "' in copy.refusal and "complete_task with id 7" in copy.refusal
    dated = ToolCall("add_task", {"title": f"{spelt} on Friday"})  # the same task with its day said after it
    Guards("standard").screen(dated, Turn(text=unasked, open_titles={7: title}))
    assert dated.refusal and 'task 7 "' in dated.refusal
    wanted = ToolCall("add_task", {"title": spelt})
    Guards("standard").screen(wanted, Turn(text=asked, open_titles={7: title}))
    assert wanted.refusal is None
    other = ToolCall("add_task", {"title": spelt + " report"})  # more words: another task
    Guards("standard").screen(other, Turn(text=unasked, open_titles={7: title}))
    assert other.refusal is None


# ---------------------------------------------------------------- the last ask of a small model: the call itself


def test_a_small_model_that_twice_only_says_it_will_add_is_asked_for_the_calls_arguments(
    model, small, make_agent, store
):
    """What the real 1.5B did in the conversation eval (docs/evals.md): "I will add a quarterly report, it
    will take about 2 hours, due Thursday." before and after the nudge, and no call."""
    said = "I will add a quarterly report, it will take about 2 hours, due Thursday."
    arguments = {"title": "Write the quarterly report", "due_date": "thursday", "estimate": "about 2 hours"}
    model.script("main", {"content": said}, {"content": said}, {"content": json.dumps(arguments)}, {"content": "Done."})
    r = make_agent(reflect=False).run_turn("add write the quarterly report, it will take about 2 hours, due thursday")
    forced = model.chats("main")[2]
    assert '"add write the quarterly report, it will take' in forced["messages"][-1]["content"]  # the words, quoted
    assert forced["format"]["properties"]["title"] and "tools" not in forced or not forced.get("tools")
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [("Write the quarterly report", "2026-12-03")]
    assert r.forced == "add_task" and r.tool_calls[0]["ok"] and r.correction is None
    assert "quarterly report" in r.reply and r.reply != said  # said from what ran


def test_the_forced_call_offers_only_the_tools_fields_and_passes_the_guards_like_any_other(
    model, small, make_agent, store
):
    # the schema offers no priority, tags or notes; a due date the user never said is left out, and the
    # result says so
    said = "I will add milk."
    model.script(
        "main",
        {"content": said},
        {"content": said},
        {"content": '{"title": "milk", "due_date": "friday"}'},
        {"content": "ok"},
    )
    r = make_agent(reflect=False).run_turn("add milk")
    schema = model.chats("main")[2]["format"]
    assert (
        set(schema["properties"]) == {"title", "due_date", "due_time", "estimate"}
        and not schema["additionalProperties"]
    )
    assert [tuple(r) for r in store.conn().execute("SELECT title, due_date FROM tasks")] == [("milk", None)]
    assert "due_date" in json.dumps(r.tool_calls[0]["result"])


def test_a_capable_model_is_never_forced(model, make_agent, store):
    model.script("main", {"content": "I will add milk."}, {"content": "I will add milk."})
    r = make_agent(reflect=False).run_turn("add milk")
    assert r.forced is None and tasks(store) == [] and r.correction == "Nothing was added."


def test_a_small_model_that_twice_only_says_it_will_plan_the_day_is_asked_for_the_day(model, small, make_agent, store):
    said = "I need to plan my day for tomorrow."
    model.script("main", {"content": said}, {"content": said}, {"content": '{"date": "tomorrow"}'}, {"content": "ok"})
    r = make_agent(reflect=False).run_turn("plan my day tomorrow")
    assert model.chats("main")[2]["format"]["required"] == ["date"]  # planning today by default is no answer
    assert r.forced == "plan_day" and r.tool_calls[0]["ok"] and r.correction is None


@pytest.mark.parametrize("said", ["find me time for the gym this week", "block out friday afternoon"])
def test_a_plan_with_a_choice_of_tools_is_not_forced(model, small, make_agent, said):
    model.script("main", {"content": "I will find time."}, {"content": "I will find time."})
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced is None and r.correction == "No plan was made."


def test_a_small_model_that_twice_only_says_it_will_move_the_task_named_is_asked_for_its_new_date(
    model, small, make_agent, ctx
):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "write the quarterly report", "due_date": "2026-12-03"})
    dispatch(ctx, "add_task", {"title": "buy milk"})
    said = 'I need to move the "write the quarterly report" task to Friday.'
    model.script(
        "main", {"content": said}, {"content": said}, {"content": '{"id": 1, "due_date": "friday"}'}, {"content": "ok"}
    )
    r = make_agent(reflect=False).run_turn("actually move the report to friday")
    schema = model.chats("main")[2]["format"]
    assert schema["properties"]["id"]["enum"] == [1] and schema["required"] == ["id", "due_date"]  # the task named
    assert [t["due_date"] for t in tasks(ctx.store)] == ["2026-12-04", None] and r.forced == "update_task"


@pytest.mark.parametrize(
    "said",
    [
        "I called",  # fits "call mum" and "call dad" alike: never forced
        "I spoke to mum",  # says no more than that: the title's verb is "call"
        "move the call to friday",  # fits two tasks alike: which one is the user's to say
        "rename the call to phone call",  # fits "call mum" and "call dad" alike
        "rename the report to Q4 report, no wait, don't",  # takes it back
        "rename the report to Q4 report and delete the call to dad",  # asks for more than the one name
    ],
)
def test_a_change_that_leaves_a_choice_is_never_forced(model, small, make_agent, ctx, said):
    from planner.tools import dispatch

    for title in ("write the quarterly report", "call mum", "call dad"):
        dispatch(ctx, "add_task", {"title": title})
    model.script("main", {"content": "I will do it."}, {"content": "I will do it."})
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced is None and r.correction == "Nothing was changed."


@pytest.mark.parametrize(
    "said", ["and pay the electricity bill on friday", "add renew the passport", "also book the flights to Lisbon"]
)
def test_a_copy_of_the_task_before_for_a_request_that_names_another_is_not_added(model, small, make_agent, ctx, said):
    """What the real 1.5B did in the conversation eval: after "add call the bank tomorrow", it answered "and
    pay the electricity bill on friday" with add_task "Call the bank tomorrow" again."""
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="Call the bank tomorrow", due_date="tomorrow")]},
        {"content": "Added."},
        {"tool_calls": [call("add_task", title="Call the bank tomorrow", due_date="friday")]},
        {"tool_calls": [call("add_task", title="the other one", due_date="friday")]},
        {"content": "Added."},
    )
    agent = make_agent(reflect=False)
    agent.run_turn("add call the bank tomorrow")
    r = agent.run_turn(said)
    assert "name another task" in r.tool_calls[0]["result"]["error"]
    assert r.tool_calls[1]["ok"]
    assert [t["title"] for t in tasks(ctx.store)] == ["Call the bank", "the other one"]  # (its date, in the field)


def test_the_week_session_as_the_1_5b_answered_it(model, small, make_agent, store):
    """session-week on the real 1.5B (temperature 0): "and pay the electricity bill on friday" answered twice
    with a claim and no call, and "actually the bank call is on thursday" twice with a restatement. The first
    goes on from an order to add, the second gives the one task it names a new date: each is asked for its
    one tool's arguments, and runs."""
    claimed = 'I added a task to the list: "Pay the electricity bill on Friday" with a due date of Friday 2026-12-04.'
    restated = "I will call the bank tomorrow, and pay the electricity bill on Friday."
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="Call the bank tomorrow", due_date="2026-12-02")]},
        {"content": 'I added "Call the bank tomorrow", due Wednesday.'},
        {"content": claimed},
        {"content": claimed},
        {"content": '{"title": "Pay the electricity bill", "due_date": "friday"}'},
        {"content": claimed},
        {"content": restated},
        {"content": restated},
        {"content": '{"id": 1, "due_date": "thursday"}'},
        {"content": restated},
    )
    agent = make_agent(reflect=False)
    lines = [
        "add call the bank tomorrow",
        "and pay the electricity bill on friday",
        "actually the bank call is on thursday",
    ]
    results = [agent.run_turn(line) for line in lines]
    assert [r.forced for r in results] == [None, "add_task", "update_task"]
    assert [r.correction for r in results] == [None] * 3
    assert [(t["title"], t["due_date"]) for t in tasks(store)] == [
        ("Call the bank", "2026-12-03"),
        ("Pay the electricity bill", "2026-12-04"),
    ]
    assert "electricity" in results[1].reply and "2026-12-03" in results[2].reply


@pytest.mark.parametrize(
    ("before", "said"),
    [
        ("what's on my list?", "and pay the electricity bill on friday"),  # goes on from a question: no order
        ("add call the bank tomorrow", "I have to say, this planner is great"),  # no "and": not going on
        ("add call the bank tomorrow", "and thanks!"),  # asks for nothing
    ],
)
def test_only_what_goes_on_from_an_order_is_one(before, said):
    from planner.agent.request import an_order

    assert not an_order(said, [before])
    assert an_order("and pay the electricity bill on friday", ["add call the bank tomorrow"])
    assert an_order("oh and also the gym on thursday", ["put the dentist on my list for monday"])
    assert an_order("what does my day look like tomorrow? plan it for me")  # the order after a question
    assert not an_order("what does my day look like tomorrow? is it busy?")


def test_the_sister_session_as_the_1_5b_answered_it(model, small, make_agent, store):
    """session-sister on the real 1.5B: asked for add_task's arguments it gave "add_task" as the title, and it
    answered "where does my sister live?" with its reply to the fact before. The first is not written and the
    user is told; the second is asked once more, with the user's words."""
    fact = "I added a new fact about Ana living in Lisbon now."
    model.script(
        "main",
        {"tool_calls": [call("remember", fact="Ana lives in Lisbon now")]},
        {"content": fact},
        {"content": "I will add visit Ana on Saturday."},
        {"content": "I will add visit Ana on Saturday."},
        {"content": '{"title": "add_task", "due_date": "saturday"}'},
        {"content": "Added."},
        {"content": fact},
        {"content": "Your sister Ana lives in Lisbon."},
    )
    agent = make_agent(reflect=False)
    lines = ["my sister Ana lives in Lisbon now", "add visit Ana on saturday", "where does my sister live?"]
    results = [agent.run_turn(line) for line in lines]
    forced = model.chats("main")[4]["messages"][-1]["content"]
    assert "add_task" not in forced and '"add visit Ana on saturday"' in forced  # the ask names no tool
    assert tasks(store) == [] and results[1].correction == "Nothing was added."
    assert "name of a tool" in results[1].tool_calls[0]["result"]["error"]
    assert results[2].reply == "Your sister Ana lives in Lisbon." and results[2].correction is None
    assert "earlier message" in model.chats("main")[7]["messages"][-1]["content"]


def test_the_slides_session_as_the_1_5b_answered_it(model, small, make_agent, store):
    """session-slides-plan on the real 1.5B: the title kept "for tomorrow", and "what does my day look like
    tomorrow? plan it for me" was answered twice with "I planed the day for tomorrow." and no call. The
    order after the question is an order: the day to plan is asked for, and the plan is made."""
    planned = "I planed the day for tomorrow."
    model.script(
        "main",
        {
            "tool_calls": [
                call("add_task", title="Prepare the slides for tomorrow", due_date="2026-12-02", estimate="3 hours")
            ]
        },
        {"content": "I added a task to prepare the slides for tomorrow."},
        {"content": planned},
        {"content": planned},
        {"content": '{"date": "2026-12-01"}'},  # as the 1.5B gave it: today, for "tomorrow"
        {"content": planned},
        {"content": "You're welcome!"},
    )
    agent = make_agent(reflect=False)
    lines = [
        "add prepare the slides for tomorrow, it takes about 3 hours",
        "what does my day look like tomorrow? plan it for me",
        "great, thanks!",
    ]
    results = [agent.run_turn(line) for line in lines]
    assert [t["title"] for t in tasks(store)] == ["Prepare the slides"]
    assert [r.forced for r in results] == [None, "plan_day", None] and [r.correction for r in results] == [None] * 3
    assert "slides" in results[1].reply and "2026-12-02" in results[1].reply
    assert results[2].reply == "You're welcome!"


def test_the_oat_milk_session_as_the_1_5b_answered_it(model, small, make_agent, ctx):
    """session-oat-milk on the real 1.5B: "rename the milk task to buy oat milk" called rename_list with
    "milk", and failed, then said "I will rename the milk task to buy oat milk." twice; "oh and it's due
    tomorrow" then made no call. The list tool's error names the task and the tool that renames it; a failed
    call of the wrong tool is no chance the one tool had, so after the promise the new name is asked for;
    "it" is the task the message before named, so its new date is asked for."""
    from planner.tools import dispatch

    for title in ("buy milk", "call mum"):
        dispatch(ctx, "add_task", {"title": title})
    error = dispatch(ctx, "rename_list", {"name": "milk", "new_name": "buy oat milk"})[0]["error"]
    assert 'task 1 "buy milk"' in error and "update_task" in error
    assert "list_lists" in dispatch(ctx, "rename_list", {"name": "groceries", "new_name": "food"})[0]["error"]
    will = "I will rename the milk task to buy oat milk."
    model.script(
        "main",
        {"tool_calls": [{"name": "rename_list", "arguments": {"name": "milk", "new_name": "buy oat milk"}}]},
        {"content": will},
        {"content": '{"id": 1, "title": "buy oat milk"}'},
        {"content": "ok"},
        {"content": "It is due tomorrow."},
        {"content": "It is due tomorrow."},
        {"content": '{"id": 1, "due_date": "tomorrow"}'},
        {"content": "ok"},
    )
    agent = make_agent(reflect=False)
    first = agent.run_turn("rename the milk task to buy oat milk")
    schema = model.chats("main")[2]["format"]  # the error and the promise were its two chances
    assert schema["properties"]["id"]["enum"] == [1] and schema["required"] == ["id", "title"]
    assert first.forced == "update_task" and first.correction is None and "buy oat milk" in first.reply
    second = agent.run_turn("oh and it's due tomorrow")
    assert model.chats("main")[6]["format"]["properties"]["id"]["enum"] == [1]
    assert second.forced == "update_task" and second.correction is None
    assert [(t["title"], t["due_date"]) for t in tasks(ctx.store)] == [
        ("buy oat milk", "2026-12-02"),
        ("call mum", None),
    ]


def test_a_failed_call_of_the_one_tool_itself_is_not_asked_again(model, small, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    model.script(
        "main",
        {"tool_calls": [call("update_task", id="the milk one", title="buy oat milk")]},
        {"content": "I will rename the milk task."},
        {"content": "I will rename the milk task."},
    )
    r = make_agent(reflect=False).run_turn("rename the milk task to buy oat milk")
    assert "error" in r.tool_calls[0]["result"] and not r.tool_calls[0].get("refused")
    assert r.forced is None and r.correction == "Nothing was changed."
    assert [t["title"] for t in tasks(ctx.store)] == ["buy milk"]


@pytest.mark.parametrize(
    ("said", "title"), [("I called mum", "call mum"), ("I just emailed the landlord", "email the landlord")]
)
def test_telling_that_the_one_task_named_is_done_is_asked_for_that_task(model, small, make_agent, ctx, said, title):
    """session-oat-milk's last request on the real 1.5B: "I called mum" answered "I apologize, but I cannot
    assist with that." twice. The words tell the user did what one open task says: it is asked for, and done."""
    from planner.tools import dispatch

    for t in ("buy oat milk", title, "call dad"):
        dispatch(ctx, "add_task", {"title": t})
    sorry = "I apologize, but I cannot assist with that."
    model.script("main", {"content": sorry}, {"content": sorry}, {"content": '{"id": 2}'}, {"content": "ok"})
    r = make_agent(reflect=False).run_turn(said)
    assert model.chats("main")[2]["format"]["properties"]["id"]["enum"] == [2]
    assert r.forced == "complete_task" and r.correction is None
    assert [t["status"] for t in tasks(ctx.store)] == ["open", "done", "open"]


@pytest.mark.parametrize(
    ("said", "title", "kept"),
    [
        ("add visit Ana on saturday", "add visit Ana on saturday", "visit Ana on saturday"),  # the 1.5B's title
        ("add milk", "Add milk", "milk"),
        ("add add tests to the parser", "add tests to the parser", "add tests to the parser"),  # the task's own verb
        ("put the report on my list", "report", "report"),
    ],
)
def test_the_users_order_word_is_not_the_tasks_title(model, make_agent, store, said, title, kept):
    model.script("main", {"tool_calls": [call("add_task", title=title)]}, {"content": "Added."})
    r = make_agent(reflect=False).run_turn(said)
    assert [t["title"] for t in tasks(store)] == [kept]
    assert ("order" in r.tool_calls[0]["result"].get("note", "")) == (kept != title)


# ---------------------------------------------------------------- found in review of the session fixes

TELLING = [
    "we bought everything for the party",
    "I did nothing all day",
    "I read all the emails",
    "all my meetings are on monday",
    "the holidays are on the 24th, everything closes",
    "I got the flu",
    "I watched the report",
    "my birthday is on friday",
]


@pytest.mark.parametrize("said", TELLING)
def test_a_message_that_only_tells_something_names_no_task_for_yes(model, make_agent, ctx, said):
    """Telling ("we bought everything", "I got the flu") is no order: with --yes, a model that completes every
    task and clears a task's notes on it is refused, as before the session fixes widened the reading."""
    from planner.tools import dispatch

    for t in ("write the report", "get flu shot", "buy birthday present for Ana", "buy milk"):
        dispatch(ctx, "add_task", {"title": t})
    dispatch(ctx, "add_task", {"title": "pay rent", "notes": "IBAN DE00 1234, ref 77"})
    ctx.yes = True
    model.script(
        "main",
        {"tool_calls": [call("complete_task", id=i) for i in (1, 2, 3, 4)] + [call("update_task", id=5, notes="")]},
        {"content": "All done."},
        {"content": "All done."},
    )
    make_agent(reflect=False).run_turn(said)
    rows = ctx.store.conn().execute("SELECT status, notes FROM tasks ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["open"] * 5 and rows[4][1] == "IBAN DE00 1234, ref 77"


@pytest.mark.parametrize(
    ("said", "title", "args"),
    [
        ("my birthday is on friday", "buy birthday present for Ana", '{"id": 1, "due_date": "friday"}'),
        ("the meeting is on monday", "prepare for the meeting", '{"id": 1, "due_date": "monday"}'),
        ("I got the flu", "get flu shot", '{"id": 1}'),
        ("I bought a car", "buy car insurance", '{"id": 1}'),
        ("what's due on friday? move the report", "write the report", '{"id": 1, "due_date": "friday"}'),
    ],
)
def test_a_task_that_only_shares_a_word_is_never_forced(model, small, make_agent, ctx, said, title, args):
    from planner.tools import dispatch

    for t in (title, "call dad"):
        dispatch(ctx, "add_task", {"title": t})
    model.script("main", {"content": "Got it!"}, {"content": "Got it!"}, {"content": args}, {"content": "ok"})
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced is None and [(t["status"], t["due_date"]) for t in tasks(ctx.store)] == [("open", None)] * 2


def test_it_in_a_message_that_adds_is_the_new_task_not_one_named_before(model, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "write the report"})
    model.script(
        "main",
        {"content": "Noted."},
        {"content": "Noted."},  # asked once more: the words asked for a change
        {"tool_calls": [call("add_task", title="buy bread"), call("update_task", id=2, priority="high")]},
        {"content": "Added bread, high priority."},
    )
    agent = make_agent(reflect=False)
    agent.run_turn("the report is due friday")
    r = agent.run_turn("add buy bread and set it to high priority")
    assert [c["ok"] for c in r.tool_calls] == [True, True]
    assert ctx.store.conn().execute("SELECT priority FROM tasks WHERE id = 2").fetchone()[0] == "high"


def test_a_true_answer_given_twice_is_shown(model, small, make_agent):
    model.script(
        "main", {"content": "Your sister Ana lives in Lisbon."}, {"content": "Your sister Ana lives in Lisbon."}
    )
    agent = make_agent(reflect=False)
    agent.run_turn("where does my sister live?")
    assert agent.run_turn("what city is Ana in?").reply == "Your sister Ana lives in Lisbon."  # true, not stale


@pytest.mark.parametrize("guards", ["off", "standard", "small"])
def test_an_old_claim_again_keeps_the_line_that_says_what_is_true(model, make_agent, guards):
    """In every profile a claim no call backs gets its line; in small, an earlier reply again is first asked
    for an answer to this message, and the old claim once more is then shown with the line."""
    fact = "I added a new fact about Ana living in Lisbon now."
    model.script("main", *[{"content": fact}] * 4)
    agent = make_agent(reflect=False, guards=guards)
    agent.run_turn("my sister Ana lives in Lisbon now")
    r = agent.run_turn("where does my sister live?")
    assert r.reply == fact and r.correction == "Nothing was changed."


@pytest.mark.parametrize(
    ("said", "asked", "stale"),
    [
        ("I added a new fact about Ana living in Lisbon now.", "where does my sister live?", True),
        ("You're welcome, anytime!", "thank you so much", False),  # short: may rightly come again
        ("You have two open tasks: milk and rent.", "what's on my list?", False),  # the same question again
        ("You have two open tasks: milk and rent.", "and what is on it now?", True),
    ],
)
def test_an_earlier_reply_again_is_no_answer_to_a_new_message(said, asked, stale):
    from planner.agent.replies import stale as is_stale

    assert is_stale(said, ["Hello!", said], asked, ["hi", "what's on my list?"]) is stale


def test_a_title_that_is_a_tool_name_is_written_only_when_the_user_said_it(model, make_agent, store):
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="add_task")]},
        {"content": "Nothing was added."},
        {"tool_calls": [call("add_task", title="add_task")]},
        {"content": "Added."},
    )
    agent = make_agent(reflect=False)
    agent.run_turn("add read the report")
    assert tasks(store) == []
    agent.run_turn("add a task called add_task")
    assert [t["title"] for t in tasks(store)] == ["add_task"]


# ---------------------------------------------------------------- found in review: what must never be forced or guessed


def test_words_that_take_the_request_back_are_never_forced(model, small, make_agent, store):
    said = "Okay, I won't add anything."
    model.script("main", {"content": said}, {"content": said})
    r = make_agent(reflect=False).run_turn("never mind, don't add it")
    assert r.forced is None and tasks(store) == []


def test_a_move_beside_a_deletion_is_never_forced(model, small, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "packing"})
    said = "I will delete the packing task."
    model.script("main", {"content": said}, {"content": said})
    r = make_agent(reflect=False).run_turn("I'm moving on saturday, delete the packing task")
    assert r.forced is None and tasks(ctx.store)[0]["due_date"] is None


def test_a_title_said_whole_is_no_guess_and_a_finished_task_is_no_choice(model, make_agent, ctx):
    from planner.tools import dispatch

    for title in ("call mom", "call mom back", "call dad"):
        dispatch(ctx, "add_task", {"title": title})
    model.script("main", {"tool_calls": [call("complete_task", id=1)]}, {"content": "Done."})
    make_agent(reflect=False).run_turn("complete call mom")  # beside "call mom back": said whole
    dispatch(ctx, "complete_task", {"id": 2})
    model.script("main", {"tool_calls": [call("complete_task", id=3)]}, {"content": "Done."})
    make_agent(reflect=False).run_turn("mark the call as done")  # "call mom" is done: only "call dad" is open
    assert [t["status"] for t in tasks(ctx.store)] == ["done", "done", "done"]


def test_a_question_to_the_user_is_never_taken_for_a_promise(model, small, make_agent, store):
    q = "I can add it for friday or saturday, which do you prefer?"
    model.script("main", {"content": q})
    r = make_agent(reflect=False).run_turn("add the report")
    assert r.reply == q and tasks(store) == [] and r.forced is None


def test_the_move_relative_request_as_the_1_5b_answered_it(model, small, make_agent, ctx):
    """move-relative on the real 1.5B: "push the car service to tomorrow" called add_task "car service",
    which the guards refused as a copy nobody asked for, and the reply said nothing was done. A guard's
    refusal is the model's miss, not the user's no: it is nudged, and then asked for the new date."""
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "car service", "due_date": "2026-12-09"})
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="car service", due_date="tomorrow")]},
        {"content": "The task is already open."},
        {"content": "The task is already open."},
        {"content": '{"id": 1, "due_date": "tomorrow"}'},
        {"content": "ok"},
    )
    r = make_agent(reflect=False).run_turn("push the car service to tomorrow")
    assert r.tool_calls[0]["refused"] == "not_asked" and r.nudged
    assert model.chats("main")[3]["format"]["properties"]["id"]["enum"] == [1]
    assert r.forced == "update_task" and r.correction is None
    assert [(t["title"], t["due_date"]) for t in tasks(ctx.store)] == [("car service", "2026-12-02")]


@pytest.mark.parametrize("door", ["declined", "nobody"])
def test_a_change_the_user_or_the_door_refused_is_still_no_miss(model, small, make_agent, ctx, door):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "cancel gym membership"})
    ctx.confirm = (lambda q: False) if door == "declined" else None
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "I did not delete it."})
    r = make_agent(reflect=False).run_turn("delete the gym task")
    assert r.tool_calls[0]["refused"] == door and not r.nudged and r.forced is None
    assert r.correction is None if door == "declined" else "or with --yes" in r.correction  # what works, said
    assert [t["title"] for t in tasks(ctx.store)] == ["cancel gym membership"]


@pytest.mark.parametrize("every", ["all", "All", " everything ", "*", "all lists"])
def test_a_list_filter_that_means_every_list_is_left_out_and_said(model, small, make_agent, ctx, every):
    """list-open on the real 1.5B: "what's on my list?" called list_tasks with list "all", got the error that no
    list has that name, and replied "I don't have any tasks to list." with the laundry open."""
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "do the laundry"})
    model.script("main", {"tool_calls": [call("list_tasks", list=every)]}, {"content": "You have: do the laundry."})
    r = make_agent(reflect=False).run_turn("what's on my list?")
    (c,) = r.tool_calls
    assert c["ok"] and "list" not in c["arguments"] and c["sent"]["list"] == every
    assert "do the laundry" in json.dumps(c["result"])
    assert "not narrowed to a list called" in c["result"]["note"]


def test_a_real_list_name_is_kept(model, small, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy paint", "list": "house"})
    dispatch(ctx, "add_task", {"title": "do the laundry"})
    model.script("main", {"tool_calls": [call("list_tasks", list="house")]}, {"content": "House: buy paint."})
    (c,) = make_agent(reflect=False).run_turn("what's on my house list?").tool_calls
    assert c["arguments"]["list"] == "house" and "laundry" not in json.dumps(c["result"])


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("I did nothing.", True),  # delete-without-terminal on the real 1.5B
        ("Okay.", True),
        ("I could not delete it: deleting needs your confirmation.", False),
        ("The task was not deleted; run me in a terminal to confirm.", False),
    ],
)
def test_a_change_no_one_could_say_yes_to_is_always_said_with_what_works(model, make_agent, ctx, reply, said):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "cancel gym membership"})
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": reply})
    r = make_agent(reflect=False).run_turn("please delete the gym membership task")
    assert r.tool_calls[0]["refused"] == "nobody" and [t["title"] for t in tasks(ctx.store)] == [
        "cancel gym membership"
    ]
    assert (r.correction is not None and "run it in a terminal, or with --yes" in r.correction) == said


def test_a_change_the_user_said_no_to_gets_no_line_about_who_could_answer(model, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "cancel gym membership"})
    ctx.confirm = lambda q: False
    model.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Okay."})
    r = make_agent(reflect=False).run_turn("please delete the gym membership task")
    assert r.tool_calls[0]["refused"] == "declined" and r.correction is None
