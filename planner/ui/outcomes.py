"""How a view or a command that did not do what was asked says so: an exception that carries its message for a
person and the exit status the shell gives it, as an attribute of its class (todoman's way). A view returns
its value when it worked; nothing reads a prefix of its text to learn how it went.

    Failure      1  it could not be done (no such task, the database, a server)
    UsageError   2  words or options that cannot be read; the message says what to write
    Refused      4  a change that needs the user's yes was not made (nobody could answer, or they said no)

The one-shot request's 3 (the model gave up at the step limit) is a turn's outcome, not a command's.
"""

from __future__ import annotations

EXIT_OK = 0


class Failure(Exception):
    """A command that could not be done; `str(e)` is one line for a person."""

    status = 1
    label = "error"  # how the line starts where it is shown: "error: no task 9"

    def line(self) -> str:
        """The line a person reads."""
        return f"{self.label}: {self}"


class UsageError(Failure):
    """Words or options that cannot be read; the message says what to write instead."""

    status = 2


class Usage(UsageError):
    """A command called without what it needs; the message is how to call it ("/history [N]")."""

    label = "usage"


class Refused(Failure):
    """A change that needs the user's yes was not made: nobody could answer, or they said no."""

    status = 4


EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED = Failure.status, UsageError.status, Refused.status
