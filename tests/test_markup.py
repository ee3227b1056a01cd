"""What the user never reads: tool-call markup that is not JSON (XML-like tags, name(arguments)
text), run when it reads one way and otherwise answered with a sentence saying nothing was done,
and tool or argument names in a reply, rewritten in the small profile."""

import pytest
from conftest import call, tasks
from hypothesis import given
from hypothesis import strategies as st
from test_agent import events

from planner.agent.claims import talks_tools, without_tool_talk
from planner.agent.recovery import looks_like_call, parse_markup
from planner.prompts import NOTHING_DONE
from planner.tools import TOOLS

NAMES = set(TOOLS)

READABLE = [
    # verbatim from Qwen2.5-Coder-1.5B, shown to the user as the answer before
    (
        '<tools><function name="list_tasks" arguments="due_after=tomorrow"/></tools>',
        "list_tasks",
        {"due_after": "tomorrow"},
    ),
    (
        '<tools>   <call function="add_task" arguments=\'{"title": "Gym Signup", "due_date": "next monday"}\'/> </tools>',
        "add_task",
        {"title": "Gym Signup", "due_date": "next monday"},
    ),
    (
        "<tool_call>\n<function=list_tasks>\n<parameter=due_after>\ntomorrow\n</parameter>\n</function>\n</tool_call>",
        "list_tasks",
        {"due_after": "tomorrow"},
    ),
    (
        '<invoke name="add_task"><parameter name="title">buy milk</parameter><parameter name="due_date">friday</parameter>'
        "</invoke>",
        "add_task",
        {"title": "buy milk", "due_date": "friday"},
    ),
    ('<list_tasks due_after="tomorrow" status="open"/>', "list_tasks", {"due_after": "tomorrow", "status": "open"}),
    ("<add_task><title>buy milk</title></add_task>", "add_task", {"title": "buy milk"}),
    ('<function name="add_task" arguments="{&quot;title&quot;: &quot;x&quot;}"/>', "add_task", {"title": "x"}),
    ('list_tasks(due_after="tomorrow")', "list_tasks", {"due_after": "tomorrow"}),
    ("```\nlist_tasks(status='open', tag=work)\n```", "list_tasks", {"status": "open", "tag": "work"}),
    ("<tool_call>complete_task(id=3)</tool_call>", "complete_task", {"id": "3"}),
    ('add_task("buy milk")', "add_task", {"title": "buy milk"}),  # the one required argument
    ("complete_task(3)", "complete_task", {"id": "3"}),
    ("list_tasks()", "list_tasks", {}),
]


@pytest.mark.parametrize("text, name, arguments", READABLE)
def test_tool_markup_in_the_forms_small_models_write_is_read(text, name, arguments):
    m = parse_markup(text, NAMES)
    assert m and m.readable and m.rest == ""
    assert m.calls == [{"function": {"name": name, "arguments": arguments}}]


@pytest.mark.parametrize(
    "text",
    [
        '<function name="frobnicate" arguments="x=1"/>',  # no such tool, no likely one
        '<function name="list_tasks" arguments="tomorrow"/>',  # a value without its argument's name
        'update_task(1, "buy milk")',  # which argument is "buy milk"?
        "<tools><function></function></tools>",
    ],
)
def test_markup_that_reads_more_than_one_way_or_names_no_tool_is_not_run(text):
    m = parse_markup(text, NAMES)
    assert m is not None and not m.readable


@pytest.mark.parametrize(
    "text",
    [
        "I like <b>bold</b> text (really).",
        "You have 3 tasks (see the list).",
        "Hello (there)",
        "Plain words.",
        "x" * 9000 + "<list_tasks/>",  # longer than any call
    ],
)
def test_prose_with_brackets_or_tags_is_not_markup(text):
    assert parse_markup(text, NAMES) is None


@given(st.text(alphabet="<>/=\"' (),abfilnorstu_{}", max_size=400))
def test_any_text_is_read_without_error(text):
    m = parse_markup(text, NAMES)
    assert m is None or all(c["function"]["name"] in NAMES for c in m.calls)


def test_markup_is_held_back_while_streaming():
    for head in ("<", "<tools>", "list_tasks(", "list_", "```"):
        assert looks_like_call(head), head
    for head in ("Hello", "ok then", "Sure, ", "I added"):
        assert not looks_like_call(head), head


def test_a_reply_that_is_markup_runs_in_every_profile_and_is_never_shown(model, make_agent, store):
    # a capable size: the standard profile, which reads calls only when they are the whole reply
    store.conn().execute("INSERT INTO tasks (title, due_date) VALUES ('dentist', '2026-12-04')")
    markup = '<tools><function name="list_tasks" arguments="due_after=tomorrow"/></tools>'
    model.script("main", {"content": markup}, {"content": "The dentist, on Friday."})
    seen = []
    r = make_agent(reflect=False).run_turn("what's on my list after tomorrow?", events(seen))
    assert r.reply == "The dentist, on Friday."
    assert r.tool_calls[0]["name"] == "list_tasks" and r.tool_calls[0]["arguments"] == {"due_after": "tomorrow"}
    assert "<" not in "".join(d["text"] for k, d in seen if k == "token")


def test_markup_that_cannot_run_becomes_a_sentence_saying_nothing_was_done(model, make_agent, store):
    model.script("main", {"content": '<tools><function name="list_tasks" arguments="tomorrow"/></tools>'})
    seen = []
    r = make_agent(reflect=False).run_turn("what's on my list?", events(seen))
    assert r.reply == NOTHING_DONE and r.tool_calls == [] and tasks(store) == []
    assert "".join(d["text"] for k, d in seen if k == "token") == NOTHING_DONE


def test_in_small_markup_inside_prose_runs_too(model, make_agent, store):
    model.sizes["main"] = "1.5B"
    model.script("main", {"content": 'Sure! <add_task title="buy milk"/>'}, {"content": "Added buy milk."})
    r = make_agent(reflect=False).run_turn("add buy milk")
    assert [t["title"] for t in tasks(store)] == ["buy milk"] and r.reply == "Added buy milk."


# ---------------------------------------------------------------- tool names in a reply

ISSUE_REPLY = (
    'I added "buy milk for tomorrow". I noted that the priority was not specified, so I left it out. '
    'If you want to set a priority, you can call update_task with the "priority" field.'
)


@pytest.mark.parametrize(
    "reply",
    [
        ISSUE_REPLY,
        "You can call remember with the fact.",
        "I used the `recall` tool.",
        "Set the due_date argument to change it.",
        'Give the "title" parameter a new value.',
    ],
)
def test_tool_and_argument_names_in_a_reply_are_found(reply):
    assert talks_tools(reply, "add buy milk for tomorrow", NAMES)


@pytest.mark.parametrize(
    "reply, request_",
    [
        ("Added buy milk. I'll remember that you like oat milk.", "add buy milk"),
        ("Your tasks: call the bank, plan the trip.", "what's on my list?"),
        ("list_tasks reads your tasks; add_task adds one.", "which tools do you have?"),
        ("Renamed it to rename_me.py.", "rename the script task to rename_me.py"),
    ],
)
def test_plain_replies_and_answers_about_tools_are_left_alone(reply, request_):
    assert not talks_tools(reply, request_, NAMES)


def test_in_small_a_reply_naming_tools_is_rewritten_from_the_results(model, make_agent, store):
    model.sizes["main"] = "1.5B"
    model.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk for tomorrow", due_date="tomorrow", priority="high")]},
        {"content": ISSUE_REPLY},
    )
    r = make_agent(reflect=False).run_turn("add buy milk for tomorrow")
    assert r.reply == 'Added "buy milk" (id 1, due 2026-12-02).'


def test_in_small_without_results_only_the_sentences_naming_tools_go(model, make_agent):
    model.sizes["main"] = "1.5B"
    model.script("main", {"content": "Hello! I can call add_task for you. What do you need?"})
    assert make_agent(reflect=False).run_turn("hello!").reply == "Hello! What do you need?"
    model.script("main", {"content": "Use list_tasks."})
    assert make_agent(reflect=False).run_turn("hm").reply == NOTHING_DONE
    assert without_tool_talk("Call update_task. Done.", NAMES) == "Done."


def test_in_standard_a_capable_models_words_stand(model, make_agent):
    model.script("main", {"content": "You can ask me to use update_task."})
    assert make_agent(reflect=False).run_turn("hello").reply == "You can ask me to use update_task."
