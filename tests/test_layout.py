"""The layout the docs promise (docs/how-it-works.md): every module of the package is named there, in the
folder (layer) it lives in, and the package never reaches the top-level entry points."""

import re

from helpers import ROOT


def how_it_works() -> str:
    text = (ROOT / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    return text.split("# How it works", 1)[1].split("\n## ", 1)[0]


def test_every_module_is_named_in_the_readme_under_its_layer():
    section = how_it_works()
    blocks = re.split(r"\n(?=planner/[a-z]+/ )", section)  # one block per layer line of the picture
    named = {b.split()[0]: b for b in blocks if b.startswith("planner/")}
    for path in sorted((ROOT / "planner").rglob("*.py")):
        rel = path.relative_to(ROOT / "planner")
        if rel.name == "__init__.py":
            continue
        if len(rel.parts) == 1:
            assert rel.name in section, f"{rel} is not in the layout of docs/how-it-works.md"
            continue
        folder = f"planner/{rel.parts[0]}/"
        assert folder in named, f"the layer {folder} is not in the layout of docs/how-it-works.md"
        assert rel.name in named[folder], f"{rel} is not named under {folder} in the layout of docs/how-it-works.md"


def test_the_entry_points_at_the_top_are_the_ones_the_readme_names():
    top = {p.name for p in ROOT.glob("*.py")}
    assert top == {"agent.py", "tools.py", "memory.py", "embeddings.py"}
    assert all(name in how_it_works() for name in top)
    for path in (ROOT / "planner").rglob("*.py"):
        code = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) (agent|tools|memory|embeddings)\b", code, re.M), path


def test_every_setting_read_from_the_environment_is_in_help_and_docs():
    read = set(re.findall(r'"(PLANNER_[A-Z_]+)"', (ROOT / "planner" / "settings.py").read_text(encoding="utf-8")))
    assert {"PLANNER_MODEL", "PLANNER_WORK_HOURS", "PLANNER_CALDAV_PLAN"} <= read  # the pattern still finds them
    from planner.ui.cli import ENVIRONMENT

    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert read - set(ENVIRONMENT.split()) == set(), "missing from `--help`"
    assert {v for v in read if f"`{v}" not in docs} == set(), "missing from docs/configuration.md"


def test_sql_is_written_only_in_storage_and_memorys_own_tables():
    outside = []
    for path in sorted((ROOT / "planner").rglob("*.py")):
        rel = path.relative_to(ROOT / "planner").as_posix()
        if rel.startswith(("storage/", "memory/")):
            continue
        code = path.read_text(encoding="utf-8")
        if re.search(
            r"\.execute(many|script)?\(|\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b [^\n]*\b(FROM|VALUES|WHERE)\b",
            code,
        ):
            outside.append(rel)
    assert outside == []
