"""The layout the README promises: every module of the package is named in "How it works", in the
folder (layer) it lives in, and the package never reaches the top-level entry points."""

import re

from conftest import ROOT


def how_it_works() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## How it works", 1)[1].split("\n## ", 1)[0]


def test_every_module_is_named_in_the_readme_under_its_layer():
    section = how_it_works()
    blocks = re.split(r"\n(?=planner/[a-z]+/ )", section)  # one block per layer line of the picture
    named = {b.split()[0]: b for b in blocks if b.startswith("planner/")}
    for path in sorted((ROOT / "planner").rglob("*.py")):
        rel = path.relative_to(ROOT / "planner")
        if rel.name == "__init__.py":
            continue
        if len(rel.parts) == 1:
            assert rel.name in section, f"{rel} is not in the README's layout"
            continue
        folder = f"planner/{rel.parts[0]}/"
        assert folder in named, f"the layer {folder} is not in the README's layout"
        assert rel.name in named[folder], f"{rel} is not named under {folder} in the README's layout"


def test_the_entry_points_at_the_top_are_the_ones_the_readme_names():
    top = {p.name for p in ROOT.glob("*.py")}
    assert top == {"agent.py", "tools.py", "memory.py", "embeddings.py"}
    assert all(name in how_it_works() for name in top)
    for path in (ROOT / "planner").rglob("*.py"):
        code = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) (agent|tools|memory|embeddings)\b", code, re.M), path
