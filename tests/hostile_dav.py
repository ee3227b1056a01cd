"""A scripted CalDAV server on 127.0.0.1 that misbehaves on request: an empty listing once, a 500, a
trickle of one byte at a time, a redirect to another server, a replaced collection, odd to-dos, listings
that name objects without giving them (a per-item 404 or 500, a 503, no calendar-data), hrefs on another
server, a listing in another order.

    with HostileDav() as server:
        server.todos["/tasks/a.ics"] = text     # what it holds
        server.empty_listings = 1               # the next listing comes back empty, once
        server.odd["/tasks/a.ics"] = "propstat-404"   # the listing names it without its data
        server.fail["PUT"] = (500, "disk on fire \\x1b[31m")
        url = server.url                        # http://127.0.0.1:PORT/tasks/

It speaks just enough CalDAV for the planner's client (PROPFIND on the
collection and on one object, REPORT calendar-query and sync-collection with
the objects removed since a token, PUT with If-Match / If-None-Match, DELETE,
GET, MKCALENDAR) and records every request it was sent. Every change to
`todos`, by a request or by the test, is logged for sync-collection.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
import time
from xml.sax.saxutils import escape

ODD_WAYS = ("propstat-404", "propstat-500", "status-503", "no-data")  # how a listing may name an object badly


class Logged(dict):
    """path -> iCalendar text, with every change logged (the server's sync-collection history)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []  # paths in the order they changed; the token is the log's length

    def __setitem__(self, path: str, text: str) -> None:
        super().__setitem__(path, text)
        self.log.append(path)

    def __delitem__(self, path: str) -> None:
        super().__delitem__(path)
        self.log.append(path)

    def pop(self, path: str, *default: object) -> object:  # type: ignore[override]
        if path in self:
            self.log.append(path)
        return super().pop(path, *default)

    def clear(self) -> None:
        self.log += list(self)
        super().clear()


class HostileDav:
    """The server; its fields are the script, changed by the test while it runs."""

    def __init__(self) -> None:
        self.todos: Logged = Logged()  # path -> iCalendar text
        self.generation = 1  # the sync-token's number; a replaced collection gets a new one
        self.sync_tokens = True  # False: it does not do sync-collection (as some servers)
        self.odd: dict[str, str] = {}  # path -> one of ODD_WAYS: named in listings, not given whole
        self.hidden: set[str] = set()  # paths left out of listings (a direct request still finds them)
        self.hrefs: dict[str, str] = {}  # path -> the href a listing names it by (another server's, say)
        self.reverse = False  # list the objects in the reverse order of their paths
        self.item_fail: dict[str, int] = {}  # path -> the status a direct request on it answers
        self.exists = True
        self.empty_listings = 0  # how many listings to answer with nothing
        self.fail: dict[str, tuple[int, str]] = {}  # method -> (status, body), every time until removed
        self.trickle: float | None = None  # seconds between bytes of every answer
        self.redirect: str | None = None  # where every request is sent instead
        self.requests: list[tuple[str, str]] = []
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/tasks/"

    def __enter__(self) -> HostileDav:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def etag(self, path: str) -> str:
        """The ETag of one object, from its text."""
        return '"' + hashlib.sha1(self.todos[path].encode()).hexdigest()[:12] + '"'

    def replace(self) -> None:
        """The collection is deleted and made again at the same address, empty."""
        self.todos.clear()
        self.generation += 1
        self.todos.log.clear()

    def token(self) -> str:
        """The collection's sync-token now."""
        return f"tok-{self.generation}-{len(self.todos.log)}"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as servers are run: no wait for the client's delayed ACK per answer

            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, status: int, body: str = "", headers: dict[str, str] | None = None) -> None:
                data = body.encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if server.trickle is None:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):
                    try:
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(server.trickle)  # the point of this server: it is slow on purpose

            def _body(self) -> str:
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n).decode() if n else ""

            def _any(self) -> None:
                body = self._body()
                server.requests.append((self.command, self.path))
                if server.redirect:
                    return self._answer(307, headers={"Location": server.redirect})
                if self.command in server.fail:
                    status, text = server.fail[self.command]
                    return self._answer(status, text, {"Content-Type": "text/plain"})
                getattr(self, "_" + self.command.lower())(body)

            do_PROPFIND = do_REPORT = do_PUT = do_DELETE = do_MKCALENDAR = do_GET = _any  # noqa: N815

            def _propfind(self, body: str) -> None:
                if not server.exists:
                    return self._answer(404, "Not Found")
                if self.path != "/tasks/":  # one object, asked directly
                    if self.path in server.item_fail:
                        return self._answer(server.item_fail[self.path], "no")
                    if self.path not in server.todos:
                        return self._answer(404, "Not Found")
                    return self._answer(
                        207,
                        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response>'
                        f"<d:href>{self.path}</d:href><d:propstat><d:prop><d:getetag>"
                        f"{escape(server.etag(self.path))}</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
                        "</d:propstat></d:response></d:multistatus>",
                        {"Content-Type": "application/xml"},
                    )
                self._answer(
                    207,
                    (
                        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
                        f"<d:response><d:href>{self.path}</d:href><d:propstat><d:prop><d:resourcetype><d:collection/>"
                        '<c:calendar/></d:resourcetype><c:supported-calendar-component-set><c:comp name="VTODO"/>'
                        "</c:supported-calendar-component-set>"
                        + (f"<d:sync-token>{server.token()}</d:sync-token>" if server.sync_tokens else "")
                        + "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
                    ),
                    {"Content-Type": "application/xml"},
                )

            def _report(self, body: str) -> None:
                if not server.exists:
                    return self._answer(404, "Not Found")
                if "sync-collection" in body:
                    return self._sync_collection(body)
                items = (
                    {} if server.empty_listings else {p: t for p, t in server.todos.items() if p not in server.hidden}
                )
                server.empty_listings = max(0, server.empty_listings - 1)
                parts = [self._item(path, text) for path, text in sorted(items.items(), reverse=server.reverse)]
                self._answer(
                    207,
                    '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" '
                    f'xmlns:c="urn:ietf:params:xml:ns:caldav">{"".join(parts)}</d:multistatus>',
                    {"Content-Type": "application/xml"},
                )

            def _item(self, path: str, text: str) -> str:
                href = escape(server.hrefs.get(path, path))
                etag = f"<d:getetag>{escape(server.etag(path))}</d:getetag>"
                data = f"<c:calendar-data>{escape(text)}</c:calendar-data>"
                ok = "<d:status>HTTP/1.1 200 OK</d:status>"
                way = server.odd.get(path)
                if way == "status-503":
                    return f"<d:response><d:href>{href}</d:href><d:status>HTTP/1.1 503 Busy</d:status></d:response>"
                if way in ("propstat-404", "propstat-500"):
                    code = way[-3:]
                    return (
                        f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{etag}</d:prop>{ok}</d:propstat>"
                        f"<d:propstat><d:prop><c:calendar-data/></d:prop><d:status>HTTP/1.1 {code} No</d:status>"
                        "</d:propstat></d:response>"
                    )
                if way == "no-data":
                    return f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{etag}</d:prop>{ok}</d:propstat></d:response>"
                return f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{etag}{data}</d:prop>{ok}</d:propstat></d:response>"

            def _sync_collection(self, body: str) -> None:
                if not server.sync_tokens:
                    return self._answer(501, "Not Implemented")
                prefix = f"tok-{server.generation}-"
                given = body.split("<d:sync-token>", 1)[-1].split("<", 1)[0]
                if not given.startswith(prefix) or not given[len(prefix) :].isdigit():
                    return self._answer(
                        403,
                        '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:valid-sync-token/></d:error>',
                        {"Content-Type": "application/xml"},
                    )
                since = int(given[len(prefix) :])
                parts = []
                for path in dict.fromkeys(server.todos.log[since:]):
                    if path in server.todos:
                        parts.append(
                            f"<d:response><d:href>{path}</d:href><d:propstat><d:prop><d:getetag>"
                            f"{escape(server.etag(path))}</d:getetag></d:prop>"
                            "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
                        )
                    else:
                        parts.append(
                            f"<d:response><d:href>{path}</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>"
                        )
                self._answer(
                    207,
                    f'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">{"".join(parts)}'
                    f"<d:sync-token>{server.token()}</d:sync-token></d:multistatus>",
                    {"Content-Type": "application/xml"},
                )

            def _put(self, body: str) -> None:
                there = self.path in server.todos
                if self.headers.get("If-None-Match") == "*" and there:
                    return self._answer(412, "Precondition Failed")
                if self.headers.get("If-Match") and (not there or server.etag(self.path) != self.headers["If-Match"]):
                    return self._answer(412, "Precondition Failed")
                server.todos[self.path] = body
                self._answer(204 if there else 201, headers={"ETag": server.etag(self.path)})

            def _delete(self, body: str) -> None:
                server.todos.pop(self.path, None)
                self._answer(204)

            def _mkcalendar(self, body: str) -> None:
                server.exists = True
                self._answer(201)

            def _get(self, body: str) -> None:
                if self.path in server.item_fail:
                    return self._answer(server.item_fail[self.path], "no")
                if self.path not in server.todos:
                    return self._answer(404, "Not Found")
                self._answer(200, server.todos[self.path], {"ETag": server.etag(self.path)})

        return Handler


def vtodo(uid: str | None, summary: str, *lines: str) -> str:
    """A VCALENDAR with one VTODO, with extra content lines written as given (odd ones too)."""
    head = [f"UID:{uid}"] if uid else []
    body = "\r\n".join([*head, f"SUMMARY:{summary}", "DTSTAMP:20261130T100000Z", *lines])
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//odd//EN\r\nBEGIN:VTODO\r\n{body}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
