"""The README and docs/ hold together: every relative link names a file that is there and, with a #part, a
heading of that file (GitHub's anchors); the README stays short, the rest lives in docs/."""

import re

import pytest
from conftest import ROOT

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
