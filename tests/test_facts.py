"""A user's fact is not lost: extraction runs whatever the main model did or said, a fact the critic
misses is read once more by the main model, and --verbose shows what was stored or why not."""

import json

import pytest
from conftest import call
from test_background import Critic, cell, memories
from test_cli import run_agent

from planner.memory.keeper import Extraction, states_fact
from planner.prompts import EXTRACT_PROMPT
from planner.ui.traceview import SideCalls

ANA = cell("The user's sister Ana lives in Lisbon.", "person")


@pytest.mark.parametrize(
    "text",
    [
        "my sister Ana lives in Lisbon",
        "I'm allergic to peanuts",
        "I prefer mornings for meetings",
        "I work at the hospital on weekends",
        "my dentist is Dr. Costa",
        "remember that I'm vegetarian",
        "My favourite colour is green.",
    ],
)
def test_messages_stating_a_fact_about_the_user(text):
    assert states_fact(text)


@pytest.mark.parametrize(
    "text",
    [
        "add buy milk for tomorrow",
        "what's on my list this week?",
        "is my sister's birthday on my list?",
        "move the dentist to friday",
        "hello!",
        "thanks",
        "the weather is nice",
    ],
)
def test_requests_questions_and_small_talk_state_no_fact(text):
    assert not states_fact(text)


class Main:
    """The main model: the turn's scripted replies, and what it extracts when asked."""

    def __init__(self, model, replies, cells):
        self.replies, self.cells, self.extractions = list(replies), cells, []
        model.respond_with("main", self)

    def __call__(self, body):
        if body["messages"][0]["content"] == EXTRACT_PROMPT:
            self.extractions.append(body)
            return {"content": json.dumps({"memories": self.cells})}
        return self.replies.pop(0)


def agent_with(make_agent, reports):
    agent = make_agent(reflect=False, auto_memory=True)
    agent.keeper.observer = reports.append
    return agent


def test_a_fact_the_critic_misses_is_read_by_the_main_model_and_stored(model, make_agent, store, config):
    Critic(model)  # extracts nothing, as the 0.5B critic did
    main = Main(model, [{"content": "Nice!"}], [ANA])  # neither remember called nor claimed
    reports = []
    agent = agent_with(make_agent, reports)
    agent.run_turn("my sister Ana lives in Lisbon")
    assert agent.keeper.worker.drain(5)
    assert memories(store) == [("The user's sister Ana lives in Lisbon.", "person", "family", "auto")]
    assert reports == [Extraction(["The user's sister Ana lives in Lisbon."], "", ["critic", "main"])]
    # with the options of the agent's own calls, so Ollama keeps the loaded model as it is
    asked = main.extractions[0]
    assert asked["options"]["num_ctx"] == config.num_ctx and asked["keep_alive"] == config.keep_alive
    assert len(main.extractions) == 1


def test_a_request_the_critic_finds_nothing_in_costs_no_second_extraction(model, make_agent, store):
    Critic(model)
    main = Main(model, [{"tool_calls": [call("add_task", title="milk")]}, {"content": "Added milk."}], [ANA])
    reports = []
    agent = agent_with(make_agent, reports)
    agent.run_turn("add milk")
    assert agent.keeper.worker.drain(5)
    assert main.extractions == [] and memories(store) == []
    assert reports == [
        Extraction([], "critic found nothing worth keeping; the message states no fact about the user", ["critic"])
    ]


def test_a_fact_already_remembered_is_not_asked_again(model, make_agent, store):
    Critic(model)
    main = Main(
        model,
        [{"tool_calls": [call("remember", fact="The user's sister Ana lives in Lisbon.")]}, {"content": "Noted."}],
        [ANA],
    )
    reports = []
    agent = agent_with(make_agent, reports)
    agent.run_turn("my sister Ana lives in Lisbon")
    assert agent.keeper.worker.drain(5)
    assert main.extractions == [] and len(memories(store)) == 1
    assert reports[0].why == "already remembered: The user's sister Ana lives in Lisbon."


def test_when_the_main_model_is_down_the_fact_waits_for_the_next_try(model, make_agent, store):
    Critic(model)
    model.script("main", {"content": "Nice!"}, {"status": 500, "error": "busy"})
    agent = make_agent(reflect=False, auto_memory=True)
    agent.run_turn("my sister Ana lives in Lisbon")
    assert agent.keeper.worker.drain(5)
    assert memories(store) == []
    assert store.conn().execute("SELECT attempts FROM memory_jobs").fetchone()[0] == 1  # kept, to run again
    Main(model, [], [ANA])
    agent.keeper.run_pending()
    assert [m[0] for m in memories(store)] == ["The user's sister Ana lives in Lisbon."]
    assert store.conn().execute("SELECT COUNT(*) FROM memory_jobs").fetchone()[0] == 0


def test_verbose_shows_what_extraction_stored_or_why_not():
    side = SideCalls()
    side.extraction(Extraction(["The user's sister Ana lives in Lisbon."], "", ["critic", "main"]))
    side.extraction(Extraction([], "critic answered no JSON", ["critic"]))
    side.extraction(Extraction(["evil \x1b[2J"], "", ["critic"]))
    assert side.take() == [
        '  · memory extraction: stored "The user\'s sister Ana lives in Lisbon." (critic, then main)',
        "  · memory extraction: nothing stored (critic answered no JSON)",
        '  · memory extraction: stored "evil \\x1b[2J" (critic)',
    ]


def test_verbose_on_the_command_line_shows_the_extraction(fake, tmp_path):
    Critic(fake)
    Main(fake, [{"content": "Nice!"}], [ANA])
    p = run_agent(fake, tmp_path, [], "-v", "--no-reflect", "my sister Ana lives in Lisbon")
    assert p.returncode == 0, p.stderr
    assert '· memory extraction: stored "The user\'s sister Ana lives in Lisbon." (critic, then main)' in p.stderr
