"""The CalDAV password when the settings give none: asked for in a terminal (getpass, never echoed) and then
offered to the system keyring when `keyring` is installed; elsewhere named as missing, so a missing password
is never reported as a wrong one (which is what the server's refusal would say).

Where the password is looked for first is planner/sync/dav.py's `password_for`: PLANNER_CALDAV_PASSWORD,
the URL, the keyring.
"""

from __future__ import annotations

import getpass

from planner.settings import Config
from planner.sync.dav import KEYRING_SERVICE, credentials, password_for, safe_url
from planner.sync.runner import collections
from planner.ui.outcomes import Failure
from planner.ui.text import ask_yes_no


def missing_password(config: Config) -> tuple[str, str] | None:
    """(user, url) of the first task list that has a user name and no password anywhere; None when none lacks one."""
    if not config.caldav_url:
        return None
    for url, _ in collections(config):
        user = config.caldav_user or credentials(url)[0]
        if user and password_for(user, url, config.caldav_password) is None:
            return user, url
    return None


def with_password(config: Config, interactive: bool) -> Config:
    """The settings with the CalDAV password in them: as they are when one is found, else asked for in a
    terminal; a Failure that names what is missing and where to put it when no one can be asked."""
    missing = missing_password(config)
    if missing is None:
        return config
    user, url = missing
    where = f"{user} at {safe_url(url)}"
    if not interactive:
        raise Failure(
            f"no CalDAV password is set for {where}: set PLANNER_CALDAV_PASSWORD, or store it in the system "
            f"keyring (keyring set {KEYRING_SERVICE} {user}); nothing was changed"
        )
    try:
        password = getpass.getpass(f"CalDAV password for {where}: ")
    except EOFError:
        password = ""
    if not password:
        raise Failure(f"no password was given for {where}; nothing was changed")
    _offer_keyring(user, password)
    return config.replace(caldav_password=password)


def _offer_keyring(user: str, password: str) -> None:
    """Save the password in the system keyring if the user wants it there (and `keyring` is installed)."""
    try:
        import keyring
    except ImportError:
        return  # only asked for this run; PLANNER_CALDAV_PASSWORD or `pip install keyring` keeps it
    if not ask_yes_no("Save it in the system keyring, so sync does not ask again?"):
        return
    try:
        keyring.set_password(KEYRING_SERVICE, user, password)
    except Exception as e:  # no usable keyring backend here: the sync goes on with the password typed
        print(f"the keyring could not save it ({type(e).__name__}); it is used for this sync only")
