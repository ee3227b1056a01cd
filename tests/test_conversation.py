"""A whole conversation as a new user had it: three requests in one session of `python agent.py`,
with Qwen2.5-Coder-1.5B as main model (`auto` picks `small`) and the 0.5B as critic. The model
replies are the ones those models gave; the critic's extraction found nothing, as it did then.

Before, the user read guard notes meant for the model, was told a fact was saved that was lost,
and was told a task was added when nothing was added and the list was never shown."""

import json
import sqlite3

from conftest import call
from test_cli import run_agent

from evals.scripted import oracle
from planner.prompts import EXTRACT_PROMPT

ADD = "add buy milk for tomorrow and call the dentist on friday"
FACT = "my sister Ana lives in Lisbon"
LIST = "what's on my list this week?"

MODEL = {
    ADD: [
        {
            "tool_calls": [
                call("add_task", title="buy milk for tomorrow", due_date="tomorrow", priority="high"),
                call("add_task", title="call the dentist on friday", due_date="friday", priority="medium"),
            ]
        },
        {
            "content": 'I added "buy milk for tomorrow" and "call the dentist on friday". I noted that the priority '
            "was not specified, so I left it out. If you want to set a priority, you can call update_task with "
            'the "priority" field.'
        },
    ],
    FACT: [
        {
            "content": "I added a fact about Ana's location: Ana lives in Lisbon. If you want to change it, you can "
            'call remember with the "fact" field.'
        },
        {"content": "I added a fact about Ana's location: Ana lives in Lisbon."},  # asked again: the same
    ],
    LIST: [
        {"content": "I added a task to your list: 1. what's on my list this week?"},
        {"tool_calls": [call("list_tasks")]},  # asked again: it lists
        {"content": "This week: buy milk (tomorrow) and call the dentist (Friday)."},
    ],
}
ANA = {"text": "The user's sister Ana lives in Lisbon.", "kind": "person", "salience": 0.8, "topic": "family"}


def test_three_requests_in_one_session_end_with_nothing_claimed_that_did_not_happen(fake, tmp_path):
    fake.sizes["main"] = "1.5B"
    script = oracle([{"id": "issue-27", "oracle": MODEL}])

    def main(body):
        if body["messages"][0]["content"] == EXTRACT_PROMPT:  # the critic found nothing: the main model reads it
            said = body["messages"][-1]["content"].split("User: ", 1)[1]
            return {"content": json.dumps({"memories": [ANA] if "Ana" in said else []})}
        return script(body)

    def critic(body):
        if body["messages"][0]["content"] == EXTRACT_PROMPT:
            return {"content": '{"memories": []}'}
        return {"content": '{"done": true, "critique": ""}'}

    fake.respond_with("main", main)
    fake.respond_with("critic", critic)
    p = run_agent(fake, tmp_path, [ADD, FACT, LIST], "--plain")
    assert p.returncode == 0, p.stderr
    shown = p.stdout
    # 1: the titles without their date, no invented priority, and no instructions meant for the model
    db = sqlite3.connect(tmp_path / "planner.db")
    rows = db.execute("SELECT title, due_date, priority FROM tasks ORDER BY id").fetchall()
    assert rows == [("buy milk", "2026-12-02", None), ("call the dentist", "2026-12-04", None)]
    assert "update_task" not in shown and "field" not in shown and "remember with" not in shown
    replies = shown.split("bot> ")[1:]
    assert replies[0] == 'Added "buy milk" (id 1, due 2026-12-02). Added "call the dentist" (id 2, due 2026-12-04).\n'
    # 2: the claim that the fact was saved comes with the truth, and the fact itself is kept
    assert replies[1] == "I added a fact about Ana's location: Ana lives in Lisbon.\n     (Nothing was changed.)\n"
    assert db.execute("SELECT text, source FROM memories").fetchall() == [
        ("The user's sister Ana lives in Lisbon.", "auto")
    ]
    # 3: no false "added": asked once more, the model lists the tasks
    assert replies[2] == "This week: buy milk (tomorrow) and call the dentist (Friday).\n"
    assert db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 2
    db.close()
