"""Outcomes between the layers are values or exceptions, never text another layer parses: no code in planner/
decides a status by the prefix of a string ("error: ...", "usage: ..."), and each exit status is an attribute
of the exception class that carries it (planner/ui/outcomes.py), as todoman does."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

from planner.ui.outcomes import Failure, Refused, Usage, UsageError

# A status read from the start of a text: what the interface did before its outcomes were typed.
PREFIX_CHECKS = [
    re.compile(r"\.startswith\(\s*\(?\s*f?[\"'](?:error|usage|unknown command|refused)\b", re.I),
    re.compile(r"\.removeprefix\(\s*f?[\"'](?:error|usage)\b", re.I),
    re.compile(r"\breturn\s+f?[\"'](?:error|usage):", re.I),
    re.compile(r"[\"'](?:error|usage):\s*[\"']\s+(?:not\s+)?in\b", re.I),
]
# Lines the checks must catch: each was in planner/ui once (repl.py, offline.py, models.py, views.py).
ONCE = [
    'return EXIT_ERROR if said.startswith(("error:", "unknown command", "usage:")) else EXIT_OK',
    'return EXIT_USAGE if text.startswith(("error:", "usage:")) else EXIT_OK',
    'if line.startswith("error: "):',
    'raise ModelError(line.removeprefix("error: "))',
    'return f"error: {e}"',
    'return "usage: /history [N]"',
    'if "error: " in text:',
]


def test_the_checks_catch_what_was_there():
    assert all(any(p.search(line) for p in PREFIX_CHECKS) for line in ONCE)
    assert not any(p.search('print(f"error: {safe(message)}", file=sys.stderr)') for p in PREFIX_CHECKS)


def test_no_status_is_read_from_the_prefix_of_a_string_anywhere_in_the_package():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "planner").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(p.search(line) for p in PREFIX_CHECKS)
    ]
    assert not found, "a status read from text; raise a Failure (planner/ui/outcomes.py) instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "failure, status, line",
    [
        (Failure("no task 9"), 1, "error: no task 9"),
        (UsageError("cannot read 'x'"), 2, "error: cannot read 'x'"),
        (Usage("/history [N]"), 2, "usage: /history [N]"),
        (Refused("task 1 was not deleted"), 4, "error: task 1 was not deleted"),
    ],
)
def test_each_outcome_carries_its_exit_status_and_its_line(failure, status, line):
    assert failure.status == status and failure.line() == line
