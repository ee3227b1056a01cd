"""The last, forced ask of a small model never writes what the user did not ask for: a rename only when the message
is one plain rename of the one task it names, with the user's own new name; a guard's refusal is the model's miss only where
the model misread which task or that nothing new was asked (found in review, each through Agent.run_turn)."""

import json

import pytest
from conftest import call, tasks


def _promises(model, n=2):
    model.script("main", *[{"content": "I will do that."}] * n)


# 1. A task whose title holds "rename" (or a change of "the name/title ... task") is a date change, not a rename:
#    the forced ask overwrites its title with the model's words, and the date asked for is never set.
@pytest.mark.parametrize(
    "title, said",
    [
        ("rename the photo files", "move the rename files task to friday"),
        ("sign the title deed", "change the date of the title deed task to friday"),
    ],
)
def test_a_date_change_of_a_task_whose_title_says_rename_is_never_forced_as_a_rename(
    model, small, make_agent, ctx, title, said
):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": title})
    _promises(model)
    model.script("main", {"content": '{"id": 1, "title": "friday"}'}, {"content": "ok"})
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced != "update_task" or "title" not in model.chats("main")[2]["format"]["properties"]
    assert [t["title"] for t in tasks(ctx.store)] == [title]


# 2. A rename taken back after the new name: only the words before the name are read, so it is forced anyway.
@pytest.mark.parametrize(
    "said",
    [
        "rename the milk task to oat milk. no wait, leave it as it is",
        "rename the milk task to oat milk... actually never mind",
        "Rename the milk task to oat milk? Actually no.",
    ],
)
def test_a_rename_taken_back_after_the_name_is_never_forced(model, small, make_agent, ctx, said):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    model.script("main", {"content": "OK, I will leave it as it is."}, {"content": "OK, I left it."})
    model.script("main", {"content": '{"id": 1, "title": "oat milk"}'}, {"content": "ok"})
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced is None
    assert [t["title"] for t in tasks(ctx.store)] == ["buy milk"]


# 3. The new name is the user's words, read in code: the forced call may give no other title.
def test_the_forced_rename_writes_only_the_name_the_user_gave(model, small, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "buy milk"})
    _promises(model)
    model.script("main", {"content": '{"id": 1, "title": "buy oat milk"}'}, {"content": "ok"})
    make_agent(reflect=False).run_turn("rename the milk task to buy oat milk")
    assert model.chats("main")[2]["format"]["properties"]["title"]["enum"] == ["buy oat milk"]
    assert [t["title"] for t in tasks(ctx.store)] == ["buy oat milk"]


# 4. "call it" read as a new name in an idiom: the date the words ask for was forced on main; now a title is.
@pytest.mark.parametrize(
    "title, said",
    [
        ("quarterly report", "push the report to monday and call it a day"),
        ("plumber", "push the plumber task to friday and I'll call this afternoon"),
    ],
)
def test_call_it_in_an_idiom_is_no_new_name(model, small, make_agent, ctx, title, said):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": title})
    _promises(model)
    # the forced ask answered to whatever schema it sends: a new date, or the words after "call it" as a title
    given = {"due_date": "2026-12-07", "title": said.split(" call ")[1].split(" ", 1)[1]}

    def answer(body):
        schema = body.get("format")
        return {"content": json.dumps({k: given.get(k, 1) for k in schema["required"]}) if schema else "ok"}

    model.respond_with("main", answer)
    r = make_agent(reflect=False).run_turn(said)
    assert r.forced is None or set(model.chats("main")[2]["format"]["required"]) == {"id", "due_date"}
    assert [t["title"] for t in tasks(ctx.store)] == [title]


# 5. A deletion refused as not asked used to end the turn; now the nudge sends the add group for words wants()
#    misreads ("don't remind me" asks to add), and the model adds a task the user asked to be rid of.
def test_a_refused_deletion_is_not_followed_by_an_add_nobody_asked_for(model, small, make_agent, ctx):
    from planner.tools import dispatch

    dispatch(ctx, "add_task", {"title": "dentist"})
    model.script(
        "main",
        {"tool_calls": [call("delete_task", id=1)]},
        {"content": "I could not delete it."},
        {"tool_calls": [call("add_task", title="dentist reminder")]},
        {"content": "Added a dentist reminder."},
    )
    r = make_agent(reflect=False).run_turn("please don't remind me about the dentist anymore")
    assert r.tool_calls[0]["refused"] == "not_asked"
    assert not r.nudged and [t["title"] for t in tasks(ctx.store)] == ["dentist"]
