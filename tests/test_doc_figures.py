"""The figures the docs state agree with the result files they come from (tests/figures.py says how a page
names them), every table of figures on the pages that carry them names its source, and the checker itself
fails a page that disagrees."""

from __future__ import annotations

import json
import textwrap

import pytest
from figures import ROOT, blocks, fill, problems

# The pages that state measured figures; each table of figures on them names its source or says why not.
PAGES = [
    "README.md",
    "docs/how-it-works.md",
    "docs/benchmarks.md",
    "docs/evals.md",
    "docs/memory.md",
    "docs/plan.md",
    "docs/testing.md",
]


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_on_the_page_is_what_its_result_file_says(page):
    assert problems(ROOT / page) == []


def test_the_other_pages_figures_agree_too_where_they_name_a_source():
    others = [
        p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if str(p.relative_to(ROOT)) not in PAGES
    ]
    found = [
        p
        for p in others
        for line in problems(p)
        if "without a source" not in line  # only the pages above must name one
    ]
    assert found == []


def page(tmp_path, text: str, **files) -> list[str]:
    """The problems of a page with this text, its sources the given files (JSON for dicts and lists)."""
    for name, content in files.items():
        path = tmp_path / name.replace("__", "/").replace("_json", ".json").replace("_txt", ".txt")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    (tmp_path / "page.md").write_text(textwrap.dedent(text))
    return problems(tmp_path / "page.md", root=tmp_path)


RUN = {"summary": {"passed": 17, "total": 35, "rate": 17 / 35, "prompt_tokens": 160668, "seconds": 165.4}}


def test_a_figure_that_disagrees_with_its_file_fails_and_one_that_agrees_passes(tmp_path):
    good = """
        | model | passed | prompt tokens | time |
        |---|---|---|---|
        | 1.5B | 17/35 (49%) | 160,668 | 165 s |
        <!-- figures run.json
        | {summary.passed}/{summary.total} ({summary.rate:.0%}) | {summary.prompt_tokens:,} | {summary.seconds:.0f} s |
        -->
        """
    assert page(tmp_path, good, run_json=RUN) == []
    bad = page(tmp_path, good.replace("17/35 (49%)", "18/35 (51%)"), run_json=RUN)
    assert len(bad) == 1 and "gives '| 17/35 (49%) | 160,668 | 165 s |', which the page does not show" in bad[0]
    assert page(tmp_path, good, run_json={"summary": {**RUN["summary"], "prompt_tokens": 1}}) != []
    missing = page(tmp_path, good.replace("run.json", "gone.json"), run_json=RUN)
    assert missing == ["page.md:2: gone.json does not exist"]
    wrong_path = page(tmp_path, good.replace("summary.passed", "summary.passes"), run_json=RUN)
    assert "does not fit run.json (KeyError" in wrong_path[0]


def test_figures_from_several_files_worked_out_and_picked_from_lists(tmp_path):
    text = """
        Without the guards: 86 more calls and 1.8 times the tokens; .86 fused, 2 of 3 contained.
        <!-- figures off=off.json small=small.json
        {off.calls - small.calls} more calls and {off.tokens / small.tokens:.1f} times
        {small.runs[embedder=e5&set=bfcl].fused:.2fz} fused, {+small.answers[*].ok} of {#small.answers} contained
        -->
        """
    small = {
        "calls": 151,
        "tokens": 372579,
        "runs": [{"embedder": "e5", "set": "life", "fused": 0.5}, {"embedder": "e5", "set": "bfcl", "fused": 0.857}],
        "answers": [{"ok": True}, {"ok": False}, {"ok": True}],
    }
    assert page(tmp_path, text, off_json={"calls": 237, "tokens": 663464}, small_json=small) == []
    assert page(tmp_path, text, off_json={"calls": 238, "tokens": 663464}, small_json=small) != []


def test_a_printed_table_must_be_lines_of_its_output_file_in_order(tmp_path):
    saved = "scheduler vs optimum    solved\n10 tasks, 1 week         20/20\n50 tasks, 1 week         20/20\n"
    text = """
        ```text
        $ python -m bench plan
        scheduler vs optimum    solved
        50 tasks, 1 week         20/20
        ```
        <!-- output bench/results/plan.txt -->
        """
    assert page(tmp_path, text, bench__results__plan_txt=saved) == []  # a line may be left out
    swapped = text.replace("50 tasks", "10 tasks")
    assert page(tmp_path, swapped, bench__results__plan_txt=saved) == []
    wrong = text.replace("20/20", "19/20")
    assert "has no line '50 tasks, 1 week         19/20'" in page(tmp_path, wrong, bench__results__plan_txt=saved)[0]
    reordered = text.replace(
        "scheduler vs optimum    solved\n        50 tasks", "50 tasks, 1 week         20/20\n        scheduler"
    )
    assert page(tmp_path, reordered, bench__results__plan_txt=saved) != []


def test_line_counts_are_the_files_to_the_nearest_ten(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n" * 44)
    (tmp_path / "b.py").write_text("x = 1\n" * 117)
    text = """
        | file | lines |
        |---|---|
        | `a.py` | 40 |
        | `b.py` | 120 |
        | all | 160 |
        <!-- lines -->
        """
    assert page(tmp_path, text) == []
    assert page(tmp_path, text.replace("| 120 |", "| 110 |")) == ["page.md:2: b.py has 117 lines; write 120"]
    (tmp_path / "b.py").write_text("x = 1\n" * 140)
    assert len(page(tmp_path, text)) == 2  # the file and the total


def test_a_table_of_figures_must_name_its_source_or_say_why_not(tmp_path):
    table = """
        ```text
        recall@5  0.88  0.92
        ```
        """
    assert page(tmp_path, table) == [
        "page.md:2: a table of figures without a source (<!-- figures FILE ... -->, see tests/figures.py)"
    ]
    assert page(tmp_path, table + "<!-- unchecked: the run kept no result file -->\n") == []
    assert page(tmp_path, table + "\n<!-- example -->\n") == []  # a comment alone after a blank line belongs above
    assert page(tmp_path, "A sentence with 12 words and 0.5 of a figure.\n") == []  # prose is the author's to mark


def test_blocks_keep_a_fenced_block_whole_and_fill_formats_like_python():
    (text, _), *_ = [(b.text, b.markers) for b in blocks("```text\na\n\nb\n```\n<!-- example -->\n")]
    assert text == "```text\na\n\nb\n```"
    assert fill("{a:,} {b:.2f} {b:.2fz} {c:.0%}", {"a": 1234567, "b": 0.857, "c": 0.4857}) == "1,234,567 0.86 .86 49%"
    shown_as_code = "Write `<!-- lines -->` under it.\n\n```markdown\n| `a.py` | 40 |\n<!-- lines -->\n```\n"
    assert [b.markers for b in blocks(shown_as_code)] == [[], []]  # a marker shown as code is no marker
