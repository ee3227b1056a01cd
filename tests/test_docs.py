"""The README and docs/ hold together: every relative link names a file that is there and, with a #part, a
heading of that file (GitHub's anchors); the README stays short, the rest lives in docs/."""

import re
from pathlib import Path

import pytest
from conftest import ROOT
from helpers import call, clean_env, in_process

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(text: str) -> set[str]:
    """GitHub's anchor for each heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # a "# comment" in a code block is no heading
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_reaches_a_file_and_a_heading_that_are_there(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:
        path, _, part = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif part and target.suffix == ".md" and part not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{link}: no such heading")
    assert not broken, f"{page.name}: {broken}"


def test_the_anchor_rule_is_githubs():
    assert anchors("## From the shell\n## Safety and data\n### `plan --json`, and more") == {
        "from-the-shell",
        "safety-and-data",
        "plan---json-and-more",
    }


def test_the_readme_is_short_and_the_rest_is_in_docs():
    # What a reader sees: the comments naming each figure's source (tests/figures.py) are not shown. 240: the
    # reading list of the agent's files (issue 36) joined the front page.
    text = re.sub(r"<!--.*?-->\n?", "", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    assert len(text.splitlines()) <= 240, "the README is the front page: move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_page_holds_a_placeholder_for_a_figure_still_to_come(page):
    text = page.read_text(encoding="utf-8")
    assert not re.findall(r"\b(?:RESULTS-[A-Z]+|TODO|TBD|FIXME|XXX)\b", text), page.name


# ---------------------------------------------------------------- docs/usage.md's transcripts, replayed

USAGE = ROOT / "docs" / "usage.md"
PROGRAM = Path("/usr/local/bin/planner")  # the page shows the installed command; the shell names itself so
# Requests to the model in the transcripts, and what the scripted model (a fake Ollama server) does with them.
SCRIPTED = {
    "move the dentist to monday at 9": [
        {"tool_calls": [call("update_task", id=1, due_date="monday 9am")]},
        {"content": "Moved **call the dentist** to Monday 2026-12-07 at 09:00."},
    ],
}


def transcripts(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block of a page: its commands ("$ planner ...") with the lines shown after each."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def matches(expected: str, got: str) -> bool:
    """A shown line against the one the program printed; "…" in the page stands for what changes from run to
    run (a clock time, a path)."""
    return re.fullmatch(".*?".join(re.escape(part) for part in expected.split("…")), got) is not None


def replay(home: Path, fake, command: str) -> list[str]:
    """One command of a transcript, run as the page shows it; what a terminal shows (stdout, then stderr) and
    `(exit N)` when it did not exit 0."""
    import shlex

    words = shlex.split(command)
    assert words[0] == "planner", command
    env = clean_env(
        OLLAMA_HOST=fake.url,
        PLANNER_HOME=str(home),
        PLANNER_TODAY="2026-12-01",
        PLANNER_MODEL="main",
        PLANNER_CRITIC_MODEL="critic",
        PLANNER_EMBED_MODEL="embed",
        COLUMNS="80",
    )
    for reply in SCRIPTED.get(words[-1], []):
        fake.script("main", reply)
    p = in_process(words[1:], env, program=PROGRAM)
    shown = (p.stdout + p.stderr).replace(str(home), "~/planner").splitlines()
    return shown + ([f"(exit {p.returncode})"] if p.returncode else [])


def test_the_transcripts_of_the_usage_page_are_what_the_planner_prints(tmp_path, fake):
    blocks = transcripts(USAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 2 and sum(len(b) for b in blocks) >= 25
    for block in blocks:  # the blocks follow on from each other: one user, one database
        for command, expected in block:
            got = replay(tmp_path, fake, command)
            assert len(got) == len(expected) and all(map(matches, expected, got)), (
                f"$ {command}\n--- the page shows:\n"
                + "\n".join(expected)
                + "\n--- the planner prints:\n"
                + "\n".join(got)
            )


def test_the_first_hour_on_the_usage_page_shows_no_model_wording_and_no_raw_json():
    from planner.tools import TOOLS

    text = "\n".join(
        line for block in transcripts(USAGE.read_text(encoding="utf-8")) for _, lines in block for line in lines
    )
    assert not [name for name in TOOLS if "_" in name and name in text]
    assert "tell the user" not in text.lower() and "the user" not in text.lower()
    assert not re.search(r"[\[{]\s*\"", text)  # no JSON in what a person reads
