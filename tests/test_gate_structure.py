"""Nothing writes the user's data but the gate (planner/storage/gate.py), checked in the code itself.

The tables of the user's data are written by SQL in the modules that own them (tasks.py, calendar.py,
preferences.py, worklog.py, memories.py); every function there that writes one, or calls one that does, is a
writer, and a writer is called from gate.py alone (the owners hand theirs to the gate as values, in an
Owner). So every change to them passes the one decision: a change set, the policy's verdict for its rows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

GUARDED = (
    "tasks",
    "task_tags",
    "task_events",
    "events",
    "event_log",
    "preferences",
    "worklog",
    "memories",
    "memory_history",
)
WRITE = re.compile(
    r"\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+(" + "|".join(GUARDED) + r")\b", re.I
)
OWNERS = {"tasks.py", "calendar.py", "preferences.py", "worklog.py", "memories.py", "migrations.py"}
GATE = ROOT / "planner" / "storage" / "gate.py"
# Writers called outside the gate on purpose, each for a reason: they change no row the user would count.
BOOKKEEPING = {
    ("memories", "set_vectors"): "a memory's embedding, computed from its text again (a new embedding model)",
    ("memories", "forget_marker"): "the marker of a forgotten scene, so undo puts the scene back",
}


def sources() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "planner").rglob("*.py"))}


def strings(node: ast.AST) -> str:
    """The text of every string in a node (f-strings by their constant parts)."""
    return " ".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def methods_of(tree: ast.Module) -> set[str]:
    """The names of the functions a module defines inside its classes."""
    return {
        f.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, ast.FunctionDef)
    }


def writers_of(tree: ast.Module) -> set[str]:
    """The functions of a module that write a guarded table, directly or through another one of its own."""
    funcs = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    found = {name for name, f in funcs.items() if WRITE.search(strings(f))}
    while True:
        calls = {
            name
            for name, f in funcs.items()
            if name not in found
            and any(
                isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) in found
                for n in ast.walk(f)
            )
        }
        if not calls:
            return found
        found |= calls


def test_only_the_owning_modules_hold_sql_that_writes_the_users_data():
    offenders = []
    for path, tree in sources().items():
        if path.name in OWNERS and path.parent.name == "storage":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and WRITE.search(node.value):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_the_writers_are_called_by_the_gate_alone():
    trees = sources()
    writers: dict[str, set[str]] = {}
    methods: dict[str, str] = {}  # a writer that is a method (called on an object, whatever its name) -> module
    for path, tree in trees.items():
        if path.name in OWNERS - {"migrations.py"} and path.parent.name == "storage":
            writers[path.stem] = writers_of(tree)
            methods |= {m: path.stem for m in writers[path.stem] & methods_of(tree)}
    assert writers["tasks"] >= {"insert", "update", "delete", "restore", "record", "mark_events"}
    assert writers["calendar"] and writers["memories"] and writers["worklog"] and writers["preferences"]
    assert offenders_in(trees, writers, methods) == []


def offenders_in(trees: dict[Path, ast.Module], writers: dict[str, set[str]], methods: dict[str, str]) -> list[str]:
    """Calls of a writer outside gate.py and its own module, but for the bookkeeping ones named above."""
    offenders = []
    for path, tree in trees.items():
        if path == GATE:
            continue
        own = path.stem if path.parent.name == "storage" else None
        imported, modules = {}, {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("planner.storage"):
                for alias in node.names:
                    if node.module == "planner.storage":  # `from planner.storage import tasks as t`
                        modules[alias.asname or alias.name] = alias.name
                    else:  # `from planner.storage.tasks import insert`
                        imported[alias.asname or alias.name] = node.module.rsplit(".", 1)[-1]
            elif isinstance(node, ast.Import):  # `import planner.storage.tasks as t`
                for alias in node.names:
                    if alias.name.startswith("planner.storage.") and alias.asname:
                        modules[alias.asname] = alias.name.rsplit(".", 1)[-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f, called = node.func, None
            if isinstance(f, ast.Name) and f.id in writers.get(imported.get(f.id, ""), ()):
                called = (imported[f.id], f.id)
            elif (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id in modules | {m: m for m in writers}
            ):
                module = modules.get(f.value.id, f.value.id)
                if module in writers and f.attr in writers[module]:
                    called = (module, f.attr)
            if called is None and isinstance(f, ast.Attribute) and f.attr in methods:  # `self.db.set_vectors(...)`
                called = (methods[f.attr], f.attr)
            if called and called[0] != own and called not in BOOKKEEPING:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {called[0]}.{called[1]}")
    return offenders


def test_the_check_finds_a_write_that_goes_round_the_gate(tmp_path):
    # The checks above can fail: a tool that writes a task itself is found by both.
    tree = ast.parse(
        "from planner.storage.tasks import insert\n"
        "def sneaky(conn):\n"
        "    insert(conn, None, {'title': 'x'}, [], 'sneaky')\n"
        "    conn.execute('DELETE FROM tasks WHERE id = 1')\n"
    )
    assert WRITE.search(strings(tree))
    tasks = writers_of(ast.parse((ROOT / "planner" / "storage" / "tasks.py").read_text()))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") in tasks]
    assert calls


def test_the_check_finds_a_writer_called_through_an_alias_or_an_object():
    fake = Path(ROOT / "planner" / "tools" / "sneaky.py")
    tree = ast.parse(
        "from planner.storage import tasks as t\n"
        "def sneaky(conn, store):\n"
        "    t.delete(conn, 1, 'sneaky')\n"
        "    store.memories.mark_cell(1)\n"
    )
    writers = {"tasks": {"delete"}, "memories": {"mark_cell"}}
    found = offenders_in({fake: tree}, writers, {"mark_cell": "memories"})
    assert found == [
        "planner/tools/sneaky.py:3 calls tasks.delete",
        "planner/tools/sneaky.py:4 calls memories.mark_cell",
    ]
