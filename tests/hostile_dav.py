"""A scripted CalDAV server on 127.0.0.1 that misbehaves on request: an empty listing once, a 500, a
trickle of one byte at a time, a redirect to another server, a replaced collection, odd to-dos.

    with HostileDav() as server:
        server.todos["/tasks/a.ics"] = text     # what it holds
        server.empty_listings = 1               # the next listing comes back empty, once
        server.fail["PUT"] = (500, "disk on fire \\x1b[31m")
        url = server.url                        # http://127.0.0.1:PORT/tasks/

It speaks just enough CalDAV for the planner's client (PROPFIND, REPORT
calendar-query and sync-collection, PUT with If-Match / If-None-Match, DELETE,
MKCALENDAR) and records every request it was sent.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
import time
from xml.sax.saxutils import escape


class HostileDav:
    """The server; its fields are the script, changed by the test while it runs."""

    def __init__(self) -> None:
        self.todos: dict[str, str] = {}  # path -> iCalendar text
        self.generation = 1  # the sync-token's number; a replaced collection gets a new one
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
                self._answer(
                    207,
                    (
                        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
                        f"<d:response><d:href>{self.path}</d:href><d:propstat><d:prop><d:resourcetype><d:collection/>"
                        '<c:calendar/></d:resourcetype><c:supported-calendar-component-set><c:comp name="VTODO"/>'
                        f"</c:supported-calendar-component-set><d:sync-token>tok-{server.generation}</d:sync-token>"
                        "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
                    ),
                    {"Content-Type": "application/xml"},
                )

            def _report(self, body: str) -> None:
                if not server.exists:
                    return self._answer(404, "Not Found")
                if "sync-collection" in body:
                    if f"tok-{server.generation}<" not in body:
                        return self._answer(
                            403,
                            '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:valid-sync-token/></d:error>',
                            {"Content-Type": "application/xml"},
                        )
                    return self._answer(207, '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"/>')
                items = {} if server.empty_listings else dict(server.todos)
                server.empty_listings = max(0, server.empty_listings - 1)
                parts = [
                    f"<d:response><d:href>{path}</d:href><d:propstat><d:prop><d:getetag>{escape(server.etag(path))}"
                    f"</d:getetag><c:calendar-data>{escape(text)}</c:calendar-data></d:prop>"
                    "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
                    for path, text in items.items()
                ]
                self._answer(
                    207,
                    '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" '
                    f'xmlns:c="urn:ietf:params:xml:ns:caldav">{"".join(parts)}</d:multistatus>',
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
                self._answer(405)

        return Handler


def vtodo(uid: str | None, summary: str, *lines: str) -> str:
    """A VCALENDAR with one VTODO, with extra content lines written as given (odd ones too)."""
    head = [f"UID:{uid}"] if uid else []
    body = "\r\n".join([*head, f"SUMMARY:{summary}", "DTSTAMP:20261130T100000Z", *lines])
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//odd//EN\r\nBEGIN:VTODO\r\n{body}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
