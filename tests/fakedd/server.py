"""The fake Datadog API on a loopback port: routing, authentication, rate limits and faults around the stores."""

from __future__ import annotations

import contextlib
import copy
import json
import random
import re
import secrets
import socket
import sys
import threading
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .common import Body, Query, Rejected, now, param, timestamp
from .corrections import Corrections
from .dashboards import Dashboards
from .downtimes import Downtimes
from .events import Events
from .faults import LOST, Faults, Targeted
from .lag import Lag
from .monitors import Monitors
from .ratelimit import RateLimiter
from .slos import Slos
from .timeseries import Timeseries

LOST_RESPONSE = 0  # the write was committed and the connection closed without an answer
TIMED_OUT = -1  # the request hung, then the connection was closed; nothing was done
LATE_COMMIT = -2  # a create hung past the client's timeout, then was committed
PROXY_PAGE = -3  # a proxy answered 502 with an HTML page before the request reached the API

MONITOR_READS = "monitor_reads"  # the X-RateLimit-Name values are the fake's own; Datadog publishes none
MONITOR_WRITES = "monitor_writes"
MONITOR_VALIDATE = "monitor_validate"
DASHBOARD_READS = "dashboard_reads"
DASHBOARD_WRITES = "dashboard_writes"
DOWNTIME_READS = "downtime_reads"
DOWNTIME_WRITES = "downtime_writes"
SLO_READS = "slo_reads"
SLO_WRITES = "slo_writes"
KEY_READS = "key_reads"
TIMESERIES_QUERY = "timeseries_query"
EVENT_READS = "event_reads"
CORRECTION_READS = "slo_correction_reads"
CORRECTION_WRITES = "slo_correction_writes"
_WRITES = (MONITOR_WRITES, DASHBOARD_WRITES, DOWNTIME_WRITES, SLO_WRITES, CORRECTION_WRITES)
NO_CONTENT = object()  # a 204 with an empty body, as a downtime cancel answers (recorded)
# An SLO alert names its SLO: burn_rate("<id>") or error_budget("<id>").
_SLO_REFERENCE = re.compile(r'(?:burn_rate|error_budget)\("([^"]*)"\)')

# (path pattern, method) -> (rate-limit group, action); a pattern's group, if any, is the resource id.
_ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    (r"/api/v1/monitor", "GET"): (MONITOR_READS, "list monitors"),
    (r"/api/v1/monitor", "POST"): (MONITOR_WRITES, "create monitor"),
    (r"/api/v1/monitor/validate", "POST"): (MONITOR_VALIDATE, "validate monitor"),
    (r"/api/v1/monitor/(\d+)", "GET"): (MONITOR_READS, "get monitor"),
    (r"/api/v1/monitor/(\d+)", "PUT"): (MONITOR_WRITES, "update monitor"),
    (r"/api/v1/monitor/(\d+)", "DELETE"): (MONITOR_WRITES, "delete monitor"),
    (r"/api/v1/monitor/(\d+)/validate", "POST"): (MONITOR_VALIDATE, "validate monitor"),
    (r"/api/v1/dashboard", "GET"): (DASHBOARD_READS, "list dashboards"),
    (r"/api/v1/dashboard", "POST"): (DASHBOARD_WRITES, "create dashboard"),
    (r"/api/v1/dashboard/([a-z0-9-]+)", "GET"): (DASHBOARD_READS, "get dashboard"),
    (r"/api/v1/dashboard/([a-z0-9-]+)", "PUT"): (DASHBOARD_WRITES, "update dashboard"),
    (r"/api/v1/dashboard/([a-z0-9-]+)", "DELETE"): (DASHBOARD_WRITES, "delete dashboard"),
    (r"/api/v2/downtime", "GET"): (DOWNTIME_READS, "list downtimes"),
    (r"/api/v2/downtime", "POST"): (DOWNTIME_WRITES, "create downtime"),
    (r"/api/v2/downtime/([a-f0-9-]+)", "GET"): (DOWNTIME_READS, "get downtime"),
    (r"/api/v2/downtime/([a-f0-9-]+)", "PATCH"): (DOWNTIME_WRITES, "update downtime"),
    (r"/api/v2/downtime/([a-f0-9-]+)", "DELETE"): (DOWNTIME_WRITES, "cancel downtime"),
    # Before the SLO routes: "correction" would pass for an SLO id.
    (r"/api/v1/slo/correction", "GET"): (CORRECTION_READS, "list corrections"),
    (r"/api/v1/slo/correction", "POST"): (CORRECTION_WRITES, "create correction"),
    (r"/api/v1/slo/correction/([a-f0-9-]+)", "GET"): (CORRECTION_READS, "get correction"),
    (r"/api/v1/slo/correction/([a-f0-9-]+)", "PATCH"): (CORRECTION_WRITES, "update correction"),
    (r"/api/v1/slo/correction/([a-f0-9-]+)", "DELETE"): (CORRECTION_WRITES, "delete correction"),
    (r"/api/v1/slo", "GET"): (SLO_READS, "list slos"),
    (r"/api/v1/slo", "POST"): (SLO_WRITES, "create slo"),
    (r"/api/v1/slo/([a-z0-9]+)", "GET"): (SLO_READS, "get slo"),
    (r"/api/v1/slo/([a-z0-9]+)", "PUT"): (SLO_WRITES, "update slo"),
    (r"/api/v1/slo/([a-z0-9]+)", "DELETE"): (SLO_WRITES, "delete slo"),
    (r"/api/v2/validate", "GET"): (KEY_READS, "identify key"),
    (r"/api/v2/query/timeseries", "POST"): (TIMESERIES_QUERY, "query timeseries"),
    (r"/api/v2/events/search", "POST"): (EVENT_READS, "search events"),
}


@dataclass
class Request:
    method: str
    path: str
    query: Query
    status: int | None = None  # None while in flight


@dataclass(frozen=True)
class _Route:
    group: str
    action: str
    key: str | None


class FakeDatadog:
    """A stateful Datadog monitors, dashboards, downtimes, SLOs and SLO corrections API, and the timeseries
    query over series a test puts in (put_series), for the real client to talk to; a context manager."""

    def __init__(self, faults: Faults | None = None, api_key: str | None = None, app_key: str | None = None) -> None:
        self.faults = faults or Faults()
        self.api_key = api_key or secrets.token_hex(16)
        self.app_key = app_key or secrets.token_hex(20)
        self.org_id = str(uuid.uuid4())  # the org the keys belong to, as GET /api/v2/validate names it
        self.api_key_id = str(uuid.uuid4())
        self.identifies_keys = True  # False: a site where the endpoint (in preview) is not offered
        self.log: list[Request] = []
        self._lock = threading.RLock()
        self._monitors = Monitors()
        self._dashboards = Dashboards(random.Random(self.faults.seed))
        self._downtimes = Downtimes()
        self._slos = Slos()
        self._corrections = Corrections(lambda slo_id: slo_id in self._slos.items)
        self._timeseries = Timeseries()
        self._events = Events()
        self._limiter = RateLimiter(lambda: self.faults)
        self._lag = Lag(lambda: self.faults.list_lag)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def __enter__(self) -> FakeDatadog:
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._stopping.set()  # wakes requests sleeping on latency or a timeout
        self._server.shutdown()
        self._server.close_connections()
        self._server.server_close()
        self._thread.join()

    @property
    def url(self) -> str:
        assert self._server is not None, "use FakeDatadog as a context manager"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- what tests read

    @property
    def monitors(self) -> dict[int, Body]:
        return self._monitors.items

    @property
    def dashboards(self) -> dict[str, Body]:
        return self._dashboards.items

    @property
    def downtimes(self) -> dict[str, Body]:
        """Stored downtimes by id, canceled ones included: {type, id, attributes, relationships}."""
        return self._downtimes.items

    @property
    def slos(self) -> dict[str, Body]:
        return self._slos.items

    @property
    def corrections(self) -> dict[str, Body]:
        """Stored SLO corrections by id: {type, id, attributes}."""
        return self._corrections.items

    def calls(self, method: str | None = None, prefix: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for r in self.log
                if (method is None or r.method == method) and (prefix is None or r.path.startswith(prefix))
            )

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()

    # -- what a person in the Datadog UI would do: no HTTP and no faults, the same rewrites and checks

    def create_monitor(self, body: Body) -> Body:
        with self._lock:
            self._known_slos(body)
            return self._monitors.create(copy.deepcopy(body))

    def update_monitor(self, monitor_id: int, body: Body) -> Body:
        with self._lock:
            self._known_slos(body)
            return self._monitors.update(monitor_id, copy.deepcopy(body))

    def delete_monitor(self, monitor_id: int, *, force: bool = False) -> None:
        with self._lock:
            self._monitors.delete(monitor_id, force=force)

    def create_slo(self, body: Body) -> Body:
        with self._lock:
            created: Body = self._slos.create(copy.deepcopy(body))["data"][0]
            return created

    def create_correction(self, attributes: Body) -> Body:
        """An SLO correction made by hand; the answer's data object."""
        with self._lock:
            answer: Body = self._corrections.create({"data": {"type": "correction", "attributes": attributes}})["data"]
            return answer

    def create_dashboard(self, body: Body) -> Body:
        with self._lock:
            return self._dashboards.create(copy.deepcopy(body))

    def update_dashboard(self, dashboard_id: str, body: Body) -> Body:
        with self._lock:
            return self._dashboards.update(dashboard_id, copy.deepcopy(body))

    def delete_dashboard(self, dashboard_id: str) -> None:
        with self._lock:
            self._dashboards.delete(dashboard_id)

    def create_downtime(self, attributes: Body) -> Body:
        """A downtime made by hand; the answer's data object."""
        with self._lock:
            body = {"data": {"type": "downtime", "attributes": copy.deepcopy(attributes)}}
            answer: Body = self._downtimes.create(body)["data"]
            return answer

    def shown_downtime(self, downtime_id: str) -> Body:
        """A downtime as a read answers it: status and current_downtime from the clock."""
        with self._lock:
            answer: Body = self._downtimes.get(downtime_id)["data"]
            return answer

    def set_monitor_state(self, monitor_id: int, state: str) -> None:
        """What an evaluation would do: the monitor's overall state ("OK", "Alert", "Warn", "No Data")."""
        with self._lock:
            monitor = self._monitors.get(monitor_id)
            monitor["overall_state"] = state
            monitor["overall_state_modified"] = timestamp(now())

    def muted_by(self, downtime_id: str) -> set[int]:
        """The monitors a downtime mutes while active, as Datadog picks them: by ID, or every monitor that
        carries all of its monitor_tags (scope `*`: every group); none once canceled."""
        with self._lock:
            attributes = self._downtimes.items[downtime_id]["attributes"]
            if attributes.get("canceled") is not None:
                return set()
            identifier = attributes["monitor_identifier"]
            if "monitor_id" in identifier:
                return {int(identifier["monitor_id"])} & set(self._monitors.items)
            wanted = set(identifier["monitor_tags"])
            return {i for i, m in self._monitors.items.items() if wanted <= set(m.get("tags") or ())}

    def put_series(self, metric: str, tags: dict[str, str], points: dict[int, float]) -> None:
        """Metric history, as an integration or the Agent would have sent it: points by epoch second."""
        with self._lock:
            self._timeseries.put(metric, tags, points)

    def put_event(
        self,
        monitor_id: int,
        at: datetime,
        title: str,
        status: str,
        transition: tuple[str, str] | None = None,
        tags: Sequence[str] = (),
    ) -> Body:
        """A monitor alert event, as Datadog records a monitor's state change (tests/fakedd/events.py)."""
        with self._lock:
            return self._events.put(monitor_id, at, title, status, transition, tags)

    def cancel_downtime(self, downtime_id: str) -> None:
        with self._lock:
            self._downtimes.cancel(downtime_id)

    # -- HTTP

    def _serve(self, handler: _Handler) -> None:
        url = urlsplit(handler.path)
        entry = Request(handler.command, url.path, parse_qs(url.query, keep_blank_values=True))
        with self._lock:
            self.log.append(entry)
        raw = _read_body(handler)
        route = _route(handler.command, url.path)
        faults = self.faults
        headers: dict[str, str] = {}
        try:
            if faults.latency:
                self._stopping.wait(faults.latency)
            if faults.happens(faults.proxy_page_rate):
                entry.status = PROXY_PAGE
                _proxy_page(handler, dict(handler.headers) if faults.echo_headers else {})
                return
            if route is None:
                raise Rejected(404, "Not found")
            authorised, allowed, headers = self._take(handler, route)
            targeted = self._refuse(handler, route, raw, authorised=authorised, allowed=allowed)
            # A fault aimed at the request decides its fate: a random time-out does not take its place.
            if targeted is None and self._given_up(handler, entry, route, raw):
                return
            payload = self._act(route, entry.query, raw)
            self._lag.note(route.action, payload)
            payload = self._lag.hide(route.action, payload)
            if targeted is not None or self._loses_answer(route):
                entry.status = LOST_RESPONSE
                _drop(handler)
                return
            if payload is NO_CONTENT:
                _answer(handler, entry, 204, None, headers)
            else:
                _answer(handler, entry, 200, payload, headers)
        except Rejected as rejected:
            _answer(handler, entry, rejected.status, {"errors": rejected.errors}, headers)
        except Exception as error:  # a bug in the fake: make it loud in the test that hit it
            _answer(handler, entry, 500, {"errors": [f"fake Datadog failed: {error!r}"]}, headers)
            raise

    def _take(self, handler: _Handler, route: _Route) -> tuple[bool, bool, dict[str, str]]:
        """Whether the keys are the org's, whether the rate limit lets the request through, and the rate-limit
        headers of the answer (a refused request counts against the limit only when authorised)."""
        keys = (handler.headers.get("DD-API-KEY"), handler.headers.get("DD-APPLICATION-KEY"))
        # Validating the API key needs no application key (the endpoint's only auth is apiKeyAuth).
        authorised = keys == (self.api_key, self.app_key) or (
            route.action == "identify key" and keys[0] == self.api_key
        )
        allowed, headers = self._limiter.take(route.group, count=authorised)
        return authorised, allowed, headers

    def _refuse(
        self, handler: _Handler, route: _Route, raw: bytes, *, authorised: bool, allowed: bool
    ) -> Targeted | None:
        """Raise the refusal the request meets (keys, rate limit, an injected error); the fault aimed at this
        request whose answer is to be lost, if any."""
        faults = self.faults
        if not authorised:
            raise Rejected(403, "Forbidden")
        if not allowed or faults.happens(faults.throttle_rate):
            raise Rejected(429, "Rate limit exceeded")
        targeted = faults.target(handler.command, urlsplit(handler.path).path, raw)
        if targeted is not None and targeted.status != LOST:
            raise Rejected(targeted.status, targeted.error)
        if faults.happens(faults.error_rate):
            raise Rejected(faults.server_error(), "Internal Server Error")
        return targeted

    def _given_up(self, handler: _Handler, entry: Request, route: _Route, raw: bytes) -> bool:
        """Whether the request times out with the connection dropped: before it is done, or (a create) after
        it committed."""
        faults = self.faults
        if faults.happens(faults.timeout_rate):
            entry.status = TIMED_OUT
            self._stopping.wait(faults.timeout_seconds)
            _drop(handler)
            return True
        if route.action.startswith("create") and faults.happens(faults.late_commit_rate):
            entry.status = LATE_COMMIT
            self._stopping.wait(faults.timeout_seconds)
            self._act(route, entry.query, raw)  # committed, though the client has given up by now
            _drop(handler)
            return True
        return False

    def _loses_answer(self, route: _Route) -> bool:
        return route.group in _WRITES and self.faults.happens(self.faults.lost_response_rate)

    def _act(self, route: _Route, query: Query, raw: bytes) -> Any:
        key = route.key or ""
        body: Any = None
        if route.action.startswith(("create", "update", "validate", "query", "search")):
            try:
                body = json.loads(raw)
            except ValueError:
                raise Rejected(400, "Invalid JSON in the request body") from None
        verb, _, noun = route.action.partition(" ")
        acts = {
            "monitor": self._act_monitor,
            "monitors": self._act_monitor,
            "dashboard": self._act_dashboard,
            "dashboards": self._act_dashboard,
            "downtime": self._act_downtime,
            "downtimes": self._act_downtime,
            "slo": self._act_slo,
            "slos": self._act_slo,
            "correction": self._act_correction,
            "corrections": self._act_correction,
            "key": self._act_key,
            "timeseries": self._act_timeseries,
            "events": self._act_events,
        }
        with self._lock:
            return acts[noun](verb, key, query, body)

    def _act_monitor(self, verb: str, key: str, query: Query, body: Any) -> Any:
        match verb:
            case "list":
                return self._monitors.listing(query)
            case "create":
                self._known_slos(body)
                return self._monitors.create(body)
            case "validate":
                self._known_slos(body)
                return self._monitors.validate(body, int(key) if key else None)
            case "get":
                return copy.deepcopy(self._monitors.get(int(key)))
            case "update":
                self._known_slos(body)
                return self._monitors.update(int(key), body)
            case "delete":
                return self._monitors.delete(int(key), force=param(query, "force") == "true")
        raise AssertionError(verb)

    def _act_dashboard(self, verb: str, key: str, query: Query, body: Any) -> Any:
        match verb:
            case "list":
                return self._dashboards.listing(query)
            case "create":
                return self._dashboards.create(body)
            case "get":
                return copy.deepcopy(self._dashboards.get(key))
            case "update":
                return self._dashboards.update(key, body)
            case "delete":
                return self._dashboards.delete(key)
        raise AssertionError(verb)

    def _act_downtime(self, verb: str, key: str, query: Query, body: Any) -> Any:
        match verb:
            case "list":
                return self._downtimes.listing(query)
            case "create":
                return self._downtimes.create(body)
            case "get":
                return self._downtimes.get(key)
            case "update":
                return self._downtimes.update(key, body)
            case "cancel":
                self._downtimes.cancel(key)
                return NO_CONTENT
        raise AssertionError(verb)

    def _act_slo(self, verb: str, key: str, query: Query, body: Any) -> Any:
        match verb:
            case "list":
                return self._slos.listing(query)
            case "create":
                return self._slos.create(body)
            case "get":
                return {"data": copy.deepcopy(self._slos.get(key)), "errors": []}
            case "update":
                return self._slos.update(key, body)
            case "delete":
                deleted = self._slos.delete(key, self._referring_to(key), param(query, "force") == "true")
                self._corrections.delete_for_slo(key)
                return deleted
        raise AssertionError(verb)

    def _act_correction(self, verb: str, key: str, query: Query, body: Any) -> Any:
        match verb:
            case "list":
                return self._corrections.listing(query)
            case "create":
                return self._corrections.create(body)
            case "get":
                return self._corrections.get(key)
            case "update":
                return self._corrections.update(key, body)
            case "delete":
                self._corrections.delete(key)
                return NO_CONTENT
        raise AssertionError(verb)

    def _act_key(self, verb: str, key: str, query: Query, body: Any) -> Any:
        """identify key: GET /api/v2/validate."""
        if not self.identifies_keys:
            raise Rejected(404, "Not found")
        return self._validated_key()

    def _act_timeseries(self, verb: str, key: str, query: Query, body: Any) -> Any:
        """query timeseries: POST /api/v2/query/timeseries."""
        return self._timeseries.query(body)

    def _act_events(self, verb: str, key: str, query: Query, body: Any) -> Any:
        """search events: POST /api/v2/events/search."""
        return self._events.search(body, self.url)

    def _validated_key(self) -> Body:
        """The answer of GET /api/v2/validate as documented: the org's UUID, the key's ID and its scopes.
        https://docs.datadoghq.com/api/latest/key-management/#validate-api-key"""
        attributes = {"api_key_id": self.api_key_id, "api_key_scopes": [], "valid": True}
        return {"data": {"id": self.org_id, "type": "validate_v2", "attributes": attributes}}

    def _known_slos(self, body: Any) -> None:
        """An SLO alert must name an SLO that exists (a placeholder sent as an ID is refused)."""
        if isinstance(body, dict) and body.get("type") == "slo alert":
            for slo_id in _SLO_REFERENCE.findall(str(body.get("query") or "")):
                if slo_id not in self._slos.items:
                    raise Rejected(400, f"SLO {slo_id} not found")  # wording unverified

    def _referring_to(self, slo_id: str) -> list[str]:
        """What refuses an SLO's deletion: the monitors that alert on it and the dashboards that show it."""
        found = [
            f"monitor {m['id']}" for m in self._monitors.items.values() if slo_id in _SLO_REFERENCE.findall(m["query"])
        ]
        for dashboard in self._dashboards.items.values():
            if f'"slo_id": "{slo_id}"' in json.dumps(dashboard["widgets"]):
                found.append(f"dashboard {dashboard['id']}")
        return found


def _route(method: str, path: str) -> _Route | None:
    for (pattern, verb), (group, action) in _ROUTES.items():
        found = re.fullmatch(pattern, path)
        if found and verb == method:
            return _Route(group, action, found.group(1) if found.groups() else None)
    return None


def _read_body(handler: _Handler) -> bytes:
    # Read it whatever the outcome, or the next request on this keep-alive connection starts mid-body.
    raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    encoding = handler.headers.get("Content-Encoding")
    if encoding == "gzip":
        return zlib.decompress(raw, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompress(raw)
    return raw


def _answer(handler: _Handler, entry: Request, status: int, payload: Any, headers: dict[str, str]) -> None:
    data = b"" if status == 204 else json.dumps(payload).encode()
    entry.status = status  # before the client can read the answer, so the log is complete when a call returns
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def _proxy_page(handler: _Handler, echoed: dict[str, str]) -> None:
    """What a proxy in front of the API answers when its upstream fails: HTML in ISO-8859-1, not JSON, and
    (a debugging page) the request's headers, with the API keys, where a cut at a few hundred characters
    falls inside them."""
    page = "<html><head><title>502 Erreur de passerelle</title></head><body><h1>Passerelle défaillante</h1>"
    page += "<p>Le serveur amont n'a pas répondu à temps. Réessayez plus tard. " + "·" * 180 + "</p>"
    if echoed:
        page += "<pre>" + "\n".join(f"{name}: {value}" for name, value in sorted(echoed.items())) + "</pre>"
    data = (page + "</body></html>").encode("iso-8859-1")
    handler.send_response(502)
    handler.send_header("Content-Type", "text/html; charset=iso-8859-1")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _drop(handler: _Handler) -> None:
    """Close the connection with no byte of an answer written, so the client sees a connection error."""
    handler.close_connection = True
    with contextlib.suppress(OSError):
        handler.connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as urllib3's pool expects
    disable_nagle_algorithm = True  # headers and body go out in two writes; Nagle would hold the body ~40 ms
    server: _Server

    def do_GET(self) -> None:
        self.server.fake._serve(self)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read FakeDatadog.log instead of stderr."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeDatadog) -> None:
        self.fake = fake
        self._connections: dict[Any, threading.Thread] = {}
        self._guard = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind would look up this host's name, which can be slow; loopback needs none.
        TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def process_request(self, request: Any, client_address: Any) -> None:
        # Our own thread bookkeeping: daemon threads are not joined by ThreadingMixIn, but we join ours on exit.
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        with self._guard:
            self._connections[request] = thread
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self._guard:
            self._connections.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up (a timeout, a dropped connection) is one of the faults, not an error of the server.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """End idle keep-alive connections and wait for their threads."""
        with self._guard:
            open_now = dict(self._connections)
        for connection in open_now:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in open_now.values():
            thread.join(timeout=5)
