"""`python agent.py` driven as a user or a script would: fed lines on stdin, talking to the fake Ollama server.

Most runs are in this process (helpers.in_process); the ones marked `process=True` are real processes, so
start-up, exit statuses and pipes stay covered, and the first test below checks both give the same."""

import subprocess
import sys
import threading

import pytest
from helpers import ROOT, call, clean_env, db_tasks, run_agent

from planner.model.client import Ollama
from planner.settings import Config, data_dir
from planner.ui import cli


@pytest.mark.parametrize(
    "args, lines",
    [(["--bogus"], []), (["-"], ["hello"]), (["add", "milk", "+home"], []), (["export", "--format", "ics"], [])],
)
def test_a_run_in_this_process_prints_and_exits_as_the_process_does(tmp_path, args, lines):
    here = run_agent(None, tmp_path / "here", lines, *args)
    there = run_agent(None, tmp_path / "there", lines, *args, process=True)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)
    assert sorted(p.name for p in (tmp_path / "here").glob("*")) == sorted(
        p.name for p in (tmp_path / "there").glob("*")
    )


def test_ollama_down_prints_one_clear_line_and_exits_1(tmp_path):
    p = run_agent(None, tmp_path, ["hello"], process=True)
    assert p.returncode == 1
    assert (
        p.stderr.strip()
        == "error: Cannot reach Ollama at http://127.0.0.1:9. Start it with `ollama serve` (or set OLLAMA_HOST to where it runs)."
    )
    assert "Traceback" not in p.stderr + p.stdout


def test_a_model_not_pulled_prints_the_pull_command(fake, tmp_path):
    p = run_agent(fake, tmp_path, ["hi"], "--model", "qwen3.5:9b")
    assert p.returncode == 1
    assert p.stderr == "error: 1 model is not pulled:\n  ollama pull qwen3.5:9b  # main\n"


def test_a_model_without_tools_is_refused(fake, tmp_path):
    fake.models["plain"] = ["completion"]
    p = run_agent(fake, tmp_path, ["hi"], "--model", "plain")
    assert p.returncode == 1 and "cannot call tools" in p.stderr


def test_a_scripted_session_one_turn_per_line(fake, tmp_path):
    fake.script(
        "main",
        {"tool_calls": [call("add_task", title="buy milk", due_date="2026-12-02")]},
        {"content": "Added buy milk for tomorrow."},
        {"content": "You're welcome!"},
    )
    p = run_agent(fake, tmp_path, ["add milk for tomorrow", "", "   ", "thanks"], process=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["bot> Added buy milk for tomorrow.", "bot> You're welcome!"]
    assert p.stderr == ""
    assert db_tasks(tmp_path) == ["buy milk"]
    log = (tmp_path / "agent.log").read_text()
    assert "model main" in log and "prompt=10 eval=5 done_reason=stop" in log
    assert "tool add_task" in log and "ok" in log


def test_exit_word_ends_the_session(fake, tmp_path):
    fake.script("main", {"content": "one"})
    p = run_agent(fake, tmp_path, ["first", "exit", "never sent"])
    assert p.returncode == 0 and p.stdout.splitlines() == ["bot> one"]


def test_a_failed_turn_prints_one_line_and_the_session_goes_on(fake, tmp_path):
    fake.script("main", {"status": 500, "error": "llama runner crashed"}, {"content": "back"})
    p = run_agent(fake, tmp_path, ["a", "b"])
    assert p.returncode == 0
    assert p.stderr.strip().splitlines() == [
        "error: Ollama answered with an error: llama runner crashed (HTTP 500). Try again."
    ]
    assert p.stdout.splitlines() == ["bot> back"]


def test_delete_is_refused_without_a_terminal_and_allowed_with_yes(fake, tmp_path):
    fake.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "ok"})
    run_agent(fake, tmp_path, ["add x"])
    fake.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "I could not delete it."})
    run_agent(fake, tmp_path, ["delete x"])
    assert db_tasks(tmp_path) == ["x"]
    refusal = [m for m in fake.chats("main")[-1]["messages"] if m["role"] == "tool"][-1]
    assert "needs the user's yes" in refusal["content"]
    fake.script("main", {"tool_calls": [call("delete_task", id=1)]}, {"content": "Deleted."})
    p = run_agent(fake, tmp_path, ["delete x"], "--yes")
    assert p.stdout.strip() == "bot> Deleted." and db_tasks(tmp_path) == []


def test_sessions_new_named_and_continue(fake, tmp_path):
    fake.respond_with("main", lambda body: {"content": f"seen {len(body['messages'])}"})
    run_agent(fake, tmp_path, ["one"], "--session", "work")
    p = run_agent(fake, tmp_path, ["two"], "--session", "work")
    assert p.stdout.strip() == "bot> seen 4"  # system, one, reply, two
    p = run_agent(fake, tmp_path, ["three"], "-c")
    assert p.stdout.strip() == "bot> seen 6"
    p = run_agent(fake, tmp_path, ["fresh"])
    assert p.stdout.strip() == "bot> seen 2"


def test_default_database_location_and_overrides(tmp_path):
    assert data_dir({"PLANNER_HOME": "/x/y"}) == __import__("pathlib").Path("/x/y")
    assert data_dir({"XDG_DATA_HOME": "/d"}) == __import__("pathlib").Path("/d/planner")
    assert str(data_dir({})).endswith(".local/share/planner")
    c = Config.from_env({"PLANNER_HOME": "/h", "PLANNER_DB": "/elsewhere/p.db"})
    assert str(c.db_path) == "/elsewhere/p.db" and str(c.log_path) == "/elsewhere/agent.log"
    assert str(cli.load_config(["--db", "/flag.db"], {"PLANNER_DB": "/env.db"}).db_path) == "/flag.db"


def test_bad_settings_are_one_line_errors(fake, tmp_path):
    p = run_agent(fake, tmp_path, ["hi"], env={"PLANNER_TODAY": "someday"})
    assert (
        p.returncode == 2 and p.stderr.strip() == "error: PLANNER_TODAY must be a date like 2026-12-01, not 'someday'"
    )
    p = run_agent(fake, tmp_path, ["hi"], env={"PLANNER_NUM_CTX": "big"})
    assert p.returncode == 2 and "PLANNER_NUM_CTX must be a whole number" in p.stderr


def test_a_corrupt_database_is_one_line_and_untouched(fake, tmp_path):
    (tmp_path / "planner.db").write_bytes(b"\x00garbage" * 500)
    p = run_agent(fake, tmp_path, ["hi"])
    assert p.returncode == 1 and p.stderr.startswith("error: ") and "not a usable planner database" in p.stderr
    assert (tmp_path / "planner.db").read_bytes() == b"\x00garbage" * 500


@pytest.mark.slow
def test_two_processes_writing_one_database_lose_nothing(fake, tmp_path):
    n = 15
    fake.respond_with(
        "main",
        lambda body: (
            {"content": "ok"}
            if body["messages"][-1]["role"] == "tool"
            else {"tool_calls": [call("add_task", title=body["messages"][-1]["content"])]}
        ),
    )
    results = {}

    def worker(name):
        results[name] = run_agent(fake, tmp_path, [f"{name} {i}" for i in range(n)], "--no-reflect", process=True)

    threads = [threading.Thread(target=worker, args=(w,)) for w in ("alpha", "beta")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in results.values():
        assert p.returncode == 0 and p.stderr == "" and p.stdout.count("bot> ok") == n
    titles = db_tasks(tmp_path)
    assert sorted(titles) == sorted(f"{w} {i}" for w in ("alpha", "beta") for i in range(n))


def test_interactive_start_offers_to_pull_a_missing_model(fake, monkeypatch, capsys):
    fake.pullable.add("newmodel")
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    config = Config(model="newmodel", critic_model="critic", embed_model="embed")
    assert cli.ensure_models(Ollama(fake.url), config, interactive=True) == (None, True)
    assert "pulled newmodel" in capsys.readouterr().err
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    config = Config(model="other", critic_model="critic", embed_model="embed")
    assert "ollama pull other" in cli.ensure_models(Ollama(fake.url), config, interactive=True)[0]


def test_importing_modules_connects_to_nothing_and_prints_nothing():
    # The four entry points and every module of the package.
    code = (
        "import agent, tools, memory, embeddings, importlib, pkgutil, planner\n"
        "for m in pkgutil.walk_packages(planner.__path__, 'planner.'): importlib.import_module(m.name)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean_env(OLLAMA_HOST="http://127.0.0.1:9"),
    )
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""


@pytest.mark.parametrize("flag", ["--help"])
def test_help_lists_the_flags(flag):
    p = subprocess.run([sys.executable, str(ROOT / "agent.py"), flag], capture_output=True, text=True, env=clean_env())
    for f in (
        "--model",
        "--critic-model",
        "--embed-model",
        "--db",
        "--session",
        "--continue",
        "--think",
        "--no-reflect",
        "--yes",
    ):
        assert f in p.stdout


def test_environment_settings_reach_the_config():
    c = Config.from_env(
        {
            "PLANNER_MODEL": "m",
            "PLANNER_NUM_CTX": "4096",
            "PLANNER_NUM_PREDICT": "300",
            "PLANNER_CRITIC_KEEP_ALIVE": "1m",
            "PLANNER_YES": "1",
            "OLLAMA_HOST": "http://h:1",
        }
    )
    assert (c.model, c.num_ctx, c.num_predict, c.critic_keep_alive, c.yes, c.host) == (
        "m",
        4096,
        300,
        "1m",
        True,
        "http://h:1",
    )
    assert cli.load_config(["--model", "flag"], {"PLANNER_MODEL": "env"}).model == "flag"


def test_memory_slash_commands_run_locally_without_the_model(fake, tmp_path):
    fake.script(
        "main", {"tool_calls": [call("remember", fact="The user's cat is named Pixel.")]}, {"content": "Noted."}
    )
    run_agent(fake, tmp_path, ["my cat is Pixel"], "--no-reflect", "--no-auto-memory")
    calls = len(fake.chats())
    p = run_agent(
        fake,
        tmp_path,
        ["/memories", "/memories pixel", "/forget 99", "/forget cat Pixel", "/memories", "/nope", "/help"],
    )
    assert p.returncode == 0 and len(fake.chats()) == calls
    out = p.stdout.splitlines()
    assert out[0] == "[1] The user's cat is named Pixel.  (fact, said 2026-12-01)"  # the planner's today
    assert out[1].startswith("[1] The user's cat is named Pixel.  (fact, said 2026-12-01, ")
    assert out[2] == "error: no memory with id=99"
    assert out[3] == "forgot [1] The user's cat is named Pixel. (/undo brings it back)"
    assert out[4] == "no memories yet"
    assert out[5] == "error: unknown command /nope; type /help for the list"
    assert "/forget ID|WORDS" in p.stdout


def test_numpy_is_not_loaded_until_memory_is_used():
    code = (
        "import sys, agent, planner.ui.cli\n"
        "from embeddings import VectorIndex\n"
        "VectorIndex()\n"
        "print('numpy._core' in sys.modules)\n"
        "import numpy; numpy.zeros(1)\n"
        "print('numpy._core' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=clean_env())
    assert p.stdout.split() == ["False", "True"], p.stderr


def test_slash_commands_for_tasks_sessions_history_switches_and_stats(fake, tmp_path):
    fake.script(
        "main",
        {"tool_calls": [call("add_task", title="late thing", due_date="2026-11-20"), call("add_task", title="soon")]},
        {"content": "Added both."},
    )
    lines = [
        "add late thing and soon",
        "/tasks",
        "/tasks done",
        "/tasks bogus",
        "/history",
        "/reflect off",
        "/reflect",
        "/reflect maybe",
        "/stats",
        "/session",
        "/new",
        "/history",
        "/sessions",
        "/session work",
        "/session",
    ]
    p = run_agent(fake, tmp_path, lines, "--session", "home")
    out = p.stdout
    assert p.returncode == 0, p.stderr
    table = out.split("bot> Added both.\n")[1].split("no done tasks")[0].splitlines()
    assert table[0].split() == ["id", "title", "due", "status", "more"]
    assert table[1].split() == ["1", "late", "thing", "2026-11-20", "OVERDUE"]  # writes run in call order
    assert table[2].split() == ["2", "soon", "open"]
    assert "no open tasks match" in out  # `/tasks bogus`: an unknown word is a search of titles and notes
    assert "you> add late thing and soon\nbot> Added both." in out
    assert "reflect is off\nreflect is off\nusage: /reflect on|off" in out
    stats = out[out.index("                    last turn") :].splitlines()
    assert stats[0].split() == ["last", "turn", "this", "run"]
    assert stats[1].split() == ["model", "calls", "3", "3"]  # two main, one critic
    assert stats[7].split() == ["tool", "calls", "2", "2"] and stats[8].split() == ["tool", "calls", "failed", "0", "0"]
    assert "this run: 1 requests" in out
    assert "session home\nsession " in out and "nothing said yet" in out
    assert "* " in out and " home " in out
    assert "session work (0 messages)\nsession work" in out


def test_yes_no_settings_accept_on_off_and_refuse_anything_else(tmp_path):
    from planner.settings import Config, ConfigError

    assert Config.from_env({"PLANNER_YES": "on", "PLANNER_WEB": "Yes", "PLANNER_AUTO_MEMORY": "off"}).yes is True
    assert Config.from_env({"PLANNER_AUTO_MEMORY": "off"}).auto_memory is False
    assert Config.from_env({"PLANNER_WEB": "0"}).web is False
    with pytest.raises(ConfigError, match="PLANNER_YES must be one of 1/0, true/false, yes/no, on/off"):
        Config.from_env({"PLANNER_YES": "sure"})
    p = run_agent(None, tmp_path, [], "hi", env={"PLANNER_WEB": "maybe"})
    assert p.returncode == 2 and p.stderr.startswith("error: PLANNER_WEB must be one of")


def test_the_data_folder_and_every_file_in_it_are_private(fake, tmp_path):
    import stat

    home = tmp_path / "fresh"
    fake.script("main", {"tool_calls": [call("add_task", title="x")]}, {"content": "ok"})
    assert run_agent(fake, home, ["add x"], "--no-reflect").returncode == 0
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    files = [p for p in home.iterdir() if p.is_file()]
    assert {p.name for p in files} >= {"planner.db", "agent.log"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), [(p.name, oct(p.stat().st_mode)) for p in files]


def test_the_log_rotates_at_its_size_cap(tmp_path, monkeypatch):
    import logging

    from planner.ui import logs

    monkeypatch.setattr(logs, "LOG_BYTES", 2000)
    logs.setup_logging(tmp_path / "agent.log")
    log = logging.getLogger("planner")
    for i in range(200):
        log.info("line %d %s", i, "x" * 50)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["agent.log", "agent.log.1", "agent.log.2", "agent.log.3"]
    assert all(p.stat().st_size <= 2100 for p in tmp_path.iterdir())
    for h in log.handlers:
        h.close()


def test_help_lists_every_command_aligned_and_the_readme_shows_the_same(fake, make_agent):
    from planner.ui.commands import COMMANDS, Stats, help_text, run_command

    agent = make_agent()
    text = run_command(agent, "/help", Stats())
    assert text == run_command(agent, "/?", Stats()) == help_text()
    assert all(f"/{name}" in text for name in COMMANDS) and "/clear" in text and "/bye" in text
    starts = {len(line) - len(line.split("  ", 1)[1].lstrip()) for line in text.splitlines() if "  " in line}
    assert len(starts) == 1  # one column for the descriptions
    readme = (ROOT / "docs" / "usage.md").read_text()
    block = readme.split("Commands typed after `/` are answered locally")[1].split("```text\n", 1)[1].split("```")[0]
    assert block.strip() == text


def test_bye_leaves_like_exit(fake, tmp_path):
    fake.script("main", {"content": "Hi."})
    p = run_agent(fake, tmp_path, ["hello", "/bye", "never sent"], "--no-reflect")
    assert p.returncode == 0 and len(fake.chats("main")) == 1


def test_every_missing_model_is_reported_at_once_with_its_pull_line(fake, tmp_path):
    env = {"PLANNER_MODEL": "big", "PLANNER_CRITIC_MODEL": "small-critic", "PLANNER_EMBED_MODEL": "vec"}
    p = run_agent(fake, tmp_path, ["hi"], "--model", "big", "--critic-model", "small-critic", env=env)
    assert p.returncode == 1
    assert "2 models are not pulled:" in p.stderr
    assert "ollama pull big           # main" in p.stderr and "ollama pull small-critic  # critic" in p.stderr
    assert "--no-reflect --no-auto-memory run without the critic" in p.stderr
    assert not (tmp_path / "planner.db").exists()  # a run that could not start leaves nothing behind
    p = run_agent(fake, tmp_path, ["hi"], "--no-reflect", "--no-auto-memory", env={"PLANNER_CRITIC_MODEL": "x"})
    assert p.returncode == 0  # the critic is not needed then


def test_interface_options_are_not_settings():
    config, options = cli.load(["-q", "-v", "--plain", "add", "milk"], {})
    assert (options.quiet, options.verbose, options.plain, options.message) == (True, True, True, "add milk")
    assert not any(hasattr(config, name) for name in ("quiet", "verbose", "plain", "message"))
