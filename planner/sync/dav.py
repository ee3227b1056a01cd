"""A small CalDAV client over httpx: the few requests a sync needs, each with a deadline and one-line errors.

    Dav(url, user, password).info()         PROPFIND: is it a calendar collection, its components, sync-token
    .listing("VTODO")                       REPORT calendar-query: every to-do with its href, ETag and data, and
                                            the objects it named without giving them whole (Odd)
    .changes_since(token)                   REPORT sync-collection: is the token still known, what was removed
    .exists(href)                           PROPFIND on one object: True, False (404/410: it is gone), None
    .put(href, data, etag=... | create=True)   PUT with If-Match / If-None-Match: never over someone's change
    .delete(href, etag)                     DELETE with If-Match
    .mkcalendar(name)                       MKCALENDAR, for `sync --create`
    .objects("VEVENT", start, end)          events in a time range (the planner's busy time)

Why not the `caldav` library: its transport has only per-read timeouts (a
server that trickles a byte every two seconds keeps it waiting for ever), it
follows redirects to other servers with the user's password, and its errors
name Python classes. This client is the part of CalDAV the planner uses,
against Radicale, Nextcloud, Fastmail, Baikal and iCloud's common ground
(RFC 4791 calendar-query, RFC 6578 sync tokens); the tests use `caldav` as a
second device, so the two are checked against each other.

Every request runs in a thread of its own with an overall deadline; on time
out the thread is left to end by itself (a daemon), and the sync reports one
line. No request leaves the origin (scheme, host, port) of the configured
URL: a redirect elsewhere is refused, and so is an href in a listing that
names another server (it is reported, never written to), so the password
goes nowhere else. Answers are capped at MAX_ANSWER bytes. Nothing here
prints; DavError carries a line for the user.
"""

from __future__ import annotations

import functools
import logging
import re
import ssl
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

import httpx

DEADLINE = 60.0  # seconds one request may take, start to end
MAX_ANSWER = 50_000_000  # bytes of one answer
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # XML 1.0's Char, negated
NS = {"d": "DAV:", "c": "urn:ietf:params:xml:ns:caldav", "cs": "http://calendarserver.org/ns/"}


log = logging.getLogger("planner")


class DavError(Exception):
    """A request that did not work; str() is one line for the user, `kind` says which way it failed."""

    def __init__(self, message: str, kind: str = "http", status: int | None = None, body: str = ""):
        super().__init__(" ".join(message.split())[:400])
        # unreachable | tls | timeout | auth | missing | precondition | redirect | origin | http | answer
        self.kind = kind
        self.status = status
        self.body = body  # the start of the server's answer, for callers that look for a precondition


@dataclass(frozen=True)
class Answer:
    """A whole answer, read within the deadline."""

    status_code: int
    reason_phrase: str
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        """The body as text (UTF-8, undecodable bytes replaced)."""
        return self.content.decode("utf-8", "replace")


@dataclass(frozen=True)
class Resource:
    """One calendar object on the server."""

    href: str  # absolute URL
    etag: str | None
    data: str


@dataclass(frozen=True)
class Odd:
    """An object a listing named without giving it whole (a per-item error, no data, another server's href):
    neither there nor gone, as far as this listing tells."""

    href: str  # absolute URL, or the href as the server wrote it when it is not one of ours
    why: str  # in words, for the report


@dataclass(frozen=True)
class Listing:
    """A calendar-query's answer: the objects given whole, and those only named."""

    resources: list[Resource]
    odd: list[Odd]


@dataclass(frozen=True)
class Changes:
    """What a sync-collection REPORT (RFC 6578) says about a token of ours."""

    valid: bool | None  # False: the server no longer knows it (the collection was replaced); None: no tokens here
    removed: frozenset[str]  # the absolute hrefs it states removed since the token (a response with 404)


@dataclass(frozen=True)
class Info:
    """What the collection says about itself."""

    calendar: bool  # a calendar collection (it can hold to-dos or events)
    components: frozenset[str]  # VTODO, VEVENT, ... (empty: the server did not say)
    sync_token: str | None
    ctag: str | None
    name: str | None


def safe_url(url: str) -> str:
    """A URL without the user name and password that may be written into it."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urllib.parse.urlunsplit(parts._replace(netloc=host + (f":{parts.port}" if parts.port else "")))


def credentials(url: str) -> tuple[str | None, str | None]:
    """The user name and password written into a URL, if any (https://ana:secret@host/...)."""
    parts = urllib.parse.urlsplit(url)
    unquote = urllib.parse.unquote
    return (unquote(parts.username) if parts.username else None, unquote(parts.password) if parts.password else None)


KEYRING_SERVICE = "planner-caldav"


def password_for(user: str | None, url: str, given: str | None) -> str | None:
    """The password: from the environment, else the URL, else the system keyring when `keyring` is installed."""
    if given:
        return given
    _, in_url = credentials(url)
    if in_url:
        return in_url
    try:
        import keyring  # optional: `pip install keyring`, then `keyring set planner-caldav USER`
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, user or safe_url(url))
    except Exception as e:  # no keyring backend on this machine: as if none were stored
        log.info("keyring not available: %s", e)
        return None


def _origin(url: str) -> tuple[str, str, int | None]:
    p = urllib.parse.urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port or {"http": 80, "https": 443}.get(p.scheme)


def _reason(answer: Answer) -> str:
    """The server's own words about an error, in a few words of one line (its markup dropped)."""
    text = answer.text if len(answer.content) < 20_000 else ""
    words = " ".join(ET.fromstring(text).itertext()).split() if text.lstrip().startswith("<?xml") else text.split()
    said = " ".join(w for w in words if "<" not in w)[:160]
    return f"{answer.status_code} {answer.reason_phrase}" + (f": {said}" if said else "")


class Dav:
    """One CalDAV collection on one server."""

    def __init__(
        self,
        url: str,
        user: str | None,
        password: str | None,
        deadline: float = DEADLINE,
        transport: httpx.BaseTransport | None = None,
    ):
        if not url.endswith("/"):
            url += "/"
        self.url = safe_url(url)
        self.origin = _origin(self.url)  # the only place a request (and the password) goes
        self.deadline = deadline
        auth = httpx.BasicAuth(user, password or "") if user else None
        timeout = httpx.Timeout(min(deadline, 30.0), connect=min(deadline, 10.0))
        self.client = httpx.Client(
            auth=auth, timeout=timeout, follow_redirects=False, transport=transport, verify=_tls_context()
        )

    def close(self) -> None:
        """Release the connections."""
        self.client.close()

    # -- the one way requests are made

    def request(
        self,
        method: str,
        url: str,
        body: str | None = None,
        headers: dict[str, str] | None = None,
        ok: tuple[int, ...] = (200, 201, 204, 207),
    ) -> Answer:
        """One request with the deadline, same-origin redirects, the size cap and errors in words."""
        if _origin(url) != self.origin:
            raise DavError(
                f"refused to send a request to {safe_url(url)}: it is not the server of {self.url}, so the password "
                "is not sent there",
                "origin",
            )
        for _ in range(5):
            answer = self._timed(method, url, body, headers or {})
            if answer.status_code in (301, 302, 303, 307, 308) and answer.headers.get("location"):
                target = urllib.parse.urljoin(url, answer.headers["location"])
                if _origin(target) != self.origin:
                    raise DavError(
                        f"the server at {safe_url(url)} redirects to another server ({safe_url(target)}); refused, "
                        "so the password is not sent there; set PLANNER_CALDAV_URL to that address if you trust it",
                        "redirect",
                    )
                url = target
                continue
            break
        else:
            raise DavError(f"the server at {safe_url(url)} redirects in a loop", "redirect")
        if answer.status_code in ok:
            return answer
        kind = {401: "auth", 403: "auth", 404: "missing", 410: "missing", 412: "precondition"}.get(
            answer.status_code, "http"
        )
        raise DavError(
            f"{method} {safe_url(url)} failed: {_reason(answer)}", kind, answer.status_code, answer.text[:2000]
        )

    def _timed(self, method: str, url: str, body: str | None, headers: dict[str, str]) -> Answer:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["answer"] = self._send(method, url, body, headers)
            except BaseException as e:  # handed to the caller's thread
                box["error"] = e

        worker = threading.Thread(target=run, name="caldav", daemon=True)
        worker.start()
        worker.join(self.deadline)
        if worker.is_alive():  # it ends by itself when the server gives up or the program exits
            raise DavError(
                f"the server at {safe_url(url)} did not answer within {self.deadline:.0f} s; nothing more was "
                "changed; try again later",
                "timeout",
            )
        if "error" in box:
            raise self._explain(box["error"], url)
        return box["answer"]

    def _send(self, method: str, url: str, body: str | None, headers: dict[str, str]) -> Answer:
        content = body.encode("utf-8") if body is not None else None
        with self.client.stream(method, url, content=content, headers=headers) as answer:
            size, chunks = 0, []
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > MAX_ANSWER:
                    raise DavError(f"the server at {safe_url(url)} sent more than {MAX_ANSWER:,} bytes", "answer")
                chunks.append(chunk)
        return Answer(answer.status_code, answer.reason_phrase, answer.headers, b"".join(chunks))

    def _explain(self, e: BaseException, url: str) -> BaseException:
        if isinstance(e, DavError):
            return e
        where = safe_url(url)
        text = str(e).lower()
        if isinstance(e, httpx.ConnectError) and ("ssl" in text or "certificate" in text or "tls" in text):
            return DavError(
                f"the TLS connection to {where} failed ({str(e)[:120]}); check the address and the "
                "server's certificate",
                "tls",
            )
        if isinstance(e, httpx.TimeoutException):
            return DavError(f"the server at {where} did not answer in time; try again later", "timeout")
        if isinstance(e, httpx.HTTPError | OSError):
            return DavError(f"cannot reach the CalDAV server at {where} ({type(e).__name__})", "unreachable")
        return e  # a bug: the caller logs it

    # -- CalDAV

    def info(self) -> Info:
        """PROPFIND on the collection: what it is."""
        body = (
            '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/"><d:prop>'
            "<d:resourcetype/><d:displayname/><d:sync-token/><cs:getctag/><c:supported-calendar-component-set/>"
            "</d:prop></d:propfind>"
        )
        answer = self.request("PROPFIND", self.url, body, {"Depth": "0", "Content-Type": "application/xml"})
        root = self._xml(answer)
        prop = root.find(".//d:response/d:propstat/d:prop", NS)
        if prop is None:
            raise DavError(f"the server at {self.url} did not describe the collection", "answer")
        kinds = frozenset(c.get("name", "").upper() for c in prop.findall(".//c:comp", NS))
        return Info(
            calendar=prop.find("d:resourcetype/c:calendar", NS) is not None,
            components=kinds,
            sync_token=(prop.findtext("d:sync-token", None, NS) or None),
            ctag=(prop.findtext("cs:getctag", None, NS) or None),
            name=(prop.findtext("d:displayname", None, NS) or None),
        )

    def objects(self, component: str = "VTODO", start: str | None = None, end: str | None = None) -> list[Resource]:
        """REPORT calendar-query: every object holding this component that came whole (in the time range, for
        events); see listing() for the ones it only named."""
        return self.listing(component, start, end).resources

    def listing(self, component: str = "VTODO", start: str | None = None, end: str | None = None) -> Listing:
        """REPORT calendar-query: the objects holding this component, and the ones the answer named without
        giving them whole (a per-item error status, no calendar-data, an href on another server)."""
        span = f'<c:time-range start="{start}" end="{end}"/>' if start and end else ""
        body = (
            '<?xml version="1.0" encoding="utf-8"?><c:calendar-query xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>'
            f'<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="{component}">{span}'
            "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
        )
        answer = self.request("REPORT", self.url, body, {"Depth": "1", "Content-Type": "application/xml"})
        out: list[Resource] = []
        odd: list[Odd] = []
        for response in self._xml(answer).findall("d:response", NS):
            raw = response.findtext("d:href", "", NS).strip()
            if not raw:
                odd.append(Odd("(no href)", "the server named an object without its address"))
                continue
            href = self.resolve(raw)
            if href is None:
                odd.append(
                    Odd(raw[:200], "its address is on another server; refused, so the password is not sent there")
                )
                continue
            if href.rstrip("/") == self.url.rstrip("/"):
                continue  # the collection itself (some servers list it, with a 507 when they cut the answer short)
            status = _code(response.findtext("d:status", "", NS))
            if status is not None and status != 200:
                odd.append(Odd(href, f"the server answered {status} for it in the listing"))
                continue
            found = None
            why = "the listing gave no calendar-data for it"
            for propstat in response.findall("d:propstat", NS):
                code = _code(propstat.findtext("d:status", "", NS))
                data = propstat.findtext("d:prop/c:calendar-data", None, NS)
                if code == 200 and data is not None and data.strip():
                    found = Resource(href, propstat.findtext("d:prop/d:getetag", None, NS), data)
                elif propstat.find("d:prop/c:calendar-data", NS) is not None and code != 200:
                    why = f"the server answered {code} for its calendar-data"
            if found is not None:
                out.append(found)
            else:
                odd.append(Odd(href, why))
        return Listing(out, odd)

    def resolve(self, href: str) -> str | None:
        """An href from an answer as an absolute URL, or None when it names another server."""
        url = urllib.parse.urljoin(self.url, href)
        return url if _origin(url) == self.origin else None

    def changes_since(self, token: str) -> Changes:
        """REPORT sync-collection: whether the server still knows a sync-token it gave us, and the objects it
        states removed since (RFC 6578: a response with status 404)."""
        body = (
            '<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:">'
            f"<d:sync-token>{_xml_text(token)}</d:sync-token><d:sync-level>1</d:sync-level>"
            "<d:prop><d:getetag/></d:prop></d:sync-collection>"
        )
        try:
            answer = self.request("REPORT", self.url, body, {"Depth": "1", "Content-Type": "application/xml"})
        except DavError as e:
            if e.status in (403, 409) and "valid-sync-token" in e.body:
                return Changes(False, frozenset())  # RFC 6578 3.2: the token is not one of this collection's
            if e.status is not None and 400 <= e.status < 600:
                return Changes(None, frozenset())  # no sync tokens here (or not for this REPORT): nothing to tell by
            raise
        try:
            root = ET.fromstring(answer.content)
        except ET.ParseError:
            return Changes(None, frozenset())  # an answer we cannot read states nothing
        removed = set()
        for response in root.findall("d:response", NS):
            href = self.resolve(response.findtext("d:href", "", NS).strip())
            if href is not None and _code(response.findtext("d:status", "", NS)) in (404, 410):
                removed.add(href)
        return Changes(True, frozenset(removed))

    def token_valid(self, token: str) -> bool | None:
        """Whether the server still knows a sync-token it gave us (False: the collection was replaced);
        None when it does not do sync tokens."""
        return self.changes_since(token).valid

    def exists(self, href: str) -> bool | None:
        """Whether one object is still there, asked of it directly: False only when the server answers 404 or
        410 for it (that is a deletion it states); None when it could not tell (an error, a time out)."""
        body = '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
        try:
            answer = self.request("PROPFIND", href, body, {"Depth": "0", "Content-Type": "application/xml"})
        except DavError as e:
            if e.status in (404, 410):
                return False
            if e.kind in ("origin", "redirect", "http", "answer", "precondition", "missing"):
                return None
            raise  # unreachable, a time out, a refused password: the whole sync stops here, nothing changed
        try:
            root = ET.fromstring(answer.content) if answer.content.strip() else None
        except ET.ParseError:
            return None
        if root is not None:
            codes = {_code(r.findtext("d:status", "", NS)) for r in root.findall("d:response", NS)}
            if codes == {404} or codes == {410}:
                return False
        return True

    def put(self, href: str, data: str, etag: str | None = None, create: bool = False) -> str | None:
        """PUT one object: over the version with `etag` only, or only where none is (`create`); its new ETag."""
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if create:
            headers["If-None-Match"] = "*"
        elif etag:
            headers["If-Match"] = etag
        answer = self.request("PUT", href, data, headers, ok=(200, 201, 204))
        return answer.headers.get("etag")

    def delete(self, href: str, etag: str | None) -> None:
        """DELETE one object, only if it is still the version with `etag`."""
        self.request("DELETE", href, None, {"If-Match": etag} if etag else {}, ok=(200, 204, 404))

    def mkcalendar(self, name: str, component: str = "VTODO") -> None:
        """Create the collection at the URL as a calendar for this component."""
        body = (
            '<?xml version="1.0" encoding="utf-8"?><c:mkcalendar xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
            f"<d:displayname>{_xml_text(name)}</d:displayname><c:supported-calendar-component-set>"
            f'<c:comp name="{component}"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>'
        )
        self.request("MKCALENDAR", self.url, body, {"Content-Type": "application/xml"}, ok=(200, 201))

    def href_for(self, uid: str) -> str:
        """Where a new object with this UID goes: the collection and a file name safe in any URL."""
        return self.url + urllib.parse.quote(uid.replace("/", "_"), safe="") + ".ics"

    def _xml(self, answer: Answer) -> ET.Element:
        try:
            return ET.fromstring(answer.content)
        except ET.ParseError:
            pass
        # A to-do another app wrote with a character XML cannot carry (a control character, U+FFFF) makes
        # some servers' whole answer ill-formed: read it without those characters rather than not at all.
        text = _NOT_XML.sub("", answer.content.decode("utf-8", "replace"))
        try:
            return ET.fromstring(text.encode("utf-8"))
        except ET.ParseError:
            raise DavError(f"the server at {self.url} sent an answer that is not WebDAV XML", "answer") from None


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The certificates httpx trusts by default, loaded once per process (each load takes a fifth of a second
    here, and every collection of a sync opens a client)."""
    return httpx.create_ssl_context()


def _code(status_line: str) -> int | None:
    """The status code of a DAV:status line ("HTTP/1.1 404 Not Found"), or None."""
    parts = status_line.split()
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
