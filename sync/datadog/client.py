"""The one module that sends requests to Datadog, through datadog-api-client, for any kind its record describes.

Bodies go out and come back as plain JSON (the client's models are only used to check bodies, in
sync.check.models), so that what we diff is exactly what the server said; bodies.py puts on and takes off
what each kind's endpoint wraps them in, and listing.py pages through the lists. Requests are paced by the
X-RateLimit-* headers, a 429 waits for the reset, and transient failures (5xx, timeouts, dropped
connections) are retried, except a create: its failure is ambiguous (it may have been committed) and is
raised for the caller to look the key up before creating again.
"""

from __future__ import annotations

import importlib
import json
import random
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import urllib3
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import ApiException
from datadog_api_client.rest import RESTClientObject
from datadog_api_client.v2.api.events_api import EventsApi
from datadog_api_client.v2.api.key_management_api import KeyManagementApi
from datadog_api_client.v2.api.metrics_api import MetricsApi

from sync.core.kinds import KINDS, Kind
from sync.core.namespaces import NO_NAMESPACE, Ownership
from sync.core.redaction import Redactor
from sync.datadog import bodies
from sync.datadog.answers import RestClient, cut, described
from sync.datadog.credentials import Endpoint
from sync.datadog.pacing import Pacer

_READS_AT_ONCE = 10  # a plan's five lists, some of them several pages at once
_MAX_THROTTLED = 100  # 429s in a row for one request before it counts as failed


class RequestFailed(Exception):
    """A request that Datadog refused or that did not complete. The message is safe to print."""

    def __init__(
        self, label: str, detail: str, status: int | None = None, *, ambiguous: bool = False, unsure: bool = False
    ) -> None:
        super().__init__(f"{label}: {detail}")
        self.detail = detail
        self.status = status
        self.ambiguous = ambiguous  # a create that may have been committed although we saw no answer
        # No answer or a 5xx after the last try: the request may have had its effect all the same.
        self.unsure = unsure or ambiguous


class _Client(ApiClient):
    """The client with a connection pool as large as the number of concurrent writes."""

    def __init__(self, configuration: Configuration, pool: int) -> None:
        self._pool = pool
        super().__init__(configuration)

    def _build_rest_client(self) -> RESTClientObject:
        return RestClient(self.configuration, maxsize=self._pool)


class Datadog:
    def __init__(
        self,
        target: Endpoint,
        *,
        workers: int = 8,
        timeout: float = 30.0,
        attempts: int = 5,
        backoff: float = 0.5,
        ownership: Ownership = NO_NAMESPACE,
    ) -> None:
        keys = {"apiKeyAuth": target.api_key, "appKeyAuth": target.app_key}
        config = Configuration(host=target.host, api_key=keys)  # type: ignore[no-untyped-call]
        config.preload_content = False  # raw JSON and headers: exact bodies, and the rate-limit budget
        config.check_input_type = False  # plain dict bodies, already checked against the models
        config.request_timeout = timeout
        config.retry_policy = urllib3.Retry(total=0, redirect=False)  # retries are ours: never a blind POST retry
        config.is_iac = True
        config.unstable_operations["validate"] = True  # v2 (the key's org, key_org) is in preview
        self.host = target.host
        # The definitions set this client acts for: what is read is owned as its namespace says (sync.datadog.listing).
        self.ownership = ownership
        self._redact = Redactor((target.api_key, target.app_key))
        self.timeout = timeout
        # Connections for the writes under way, or for a plan's lists read at once (sync.datadog.reads).
        self._client = _Client(config, pool=max(workers, _READS_AT_ONCE) + 2)
        # One client object per API class: monitors and composites share theirs.
        self._apis = {kind.api.client: client_class(kind.api.client)(self._client) for kind in KINDS}
        self._cut = threading.Event()  # set while waits are cut (cut_waits): every sleep below ends at once
        self._pacer = Pacer(time.monotonic, self._cut.wait)
        self._attempts = attempts
        self._backoff = backoff
        self._lock = threading.Lock()
        self._shared: dict[Hashable, Future[list[dict[str, Any]]]] | None = None  # see shared_reads
        self.calls: Counter[str] = Counter()
        self.retried = 0
        self.throttled = 0

    def close(self) -> None:
        self._client.close()

    @property
    def waited(self) -> float:
        return self._pacer.waited

    # Reads: sync.datadog.listing pages through them

    def list_page(self, kind: Kind, **params: Any) -> Any:
        """One page of the kind's list endpoint."""
        listing = kind.listing
        return self._send(
            bodies.group(kind.api, "read"), f"GET {kind.api.path}", self._method(kind, listing.operation), **params
        )

    def get(self, kind: Kind, object_id: str) -> dict[str, Any]:
        """One object read whole, where the list holds summaries."""
        label = f"GET {kind.api.path}/{{id}}"
        found: dict[str, Any] = self._send(
            bodies.group(kind.api, "read"), label, self._method(kind, kind.listing.detail), object_id
        )
        return found

    @contextmanager
    def shared_reads(self) -> Iterator[None]:
        """Within, a list read again with the same filters is answered from the first read, even one still
        under way in another thread: monitors and composites come from one endpoint, each kind's reader asks
        for its own, and a plan reads ahead while the definitions are expanded (sync.datadog.reads). Only for
        one plan's reads, never across writes; within it, opening it again changes nothing."""
        if self._shared is not None:
            yield
            return
        self._shared = {}
        try:
            yield
        finally:
            self._shared = None

    def remembered(self, at: Hashable, read: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """`read()`, or within shared_reads the answer (or the failure) of the first read made at the same place."""
        shared = self._shared
        if shared is None:
            return read()
        with self._lock:
            first = at not in shared
            if first:
                shared[at] = Future()
            answer = shared[at]
        if first:
            try:
                answer.set_result(read())
            except BaseException as exc:  # whoever waits for this read fails as the reader did
                answer.set_exception(exc)
        return answer.result()

    def key_org(self) -> str | None:
        """The UUID of the org the API key belongs to; None where the site refuses to say (it is in preview).
        https://docs.datadoghq.com/api/latest/key-management/#validate-api-key"""
        keys = KeyManagementApi(self._client)  # type: ignore[no-untyped-call]
        try:
            with warnings.catch_warnings():  # the client warns on every call of an operation in preview
                warnings.filterwarnings("ignore", "Using unstable operation", UserWarning)
                answer = self._send("keys read", "GET /api/v2/validate", keys.validate)
        except RequestFailed as exc:
            if exc.status is not None and 400 <= exc.status < 500:  # not offered here; bad keys fail the reads
                return None
            raise
        data = answer.get("data") if isinstance(answer, Mapping) else None
        org = data.get("id") if isinstance(data, Mapping) else None
        return org if isinstance(org, str) and org else None

    def query_timeseries(self, body: Any) -> Any:
        """One v2 timeseries query (a TimeseriesFormulaQueryRequest), its answer as plain JSON. A read: repeated
        after a transient failure, paced on its own budget."""
        metrics = MetricsApi(self._client)  # type: ignore[no-untyped-call]
        return self._send("timeseries query", "POST /api/v2/query/timeseries", metrics.query_timeseries_data, body)

    def search_events(self, body: Any) -> Any:
        """One page of the v2 event search (an EventsListRequest), its answer as plain JSON. A read: repeated
        after a transient failure, paced on its own budget."""
        events = EventsApi(self._client)  # type: ignore[no-untyped-call]
        return self._send("events read", "POST /api/v2/events/search", events.search_events, body=body)

    # Writes: a create is never repeated here (see RequestFailed.ambiguous)

    def create(self, kind: Kind, body: Mapping[str, Any]) -> dict[str, Any]:
        label = f"POST {kind.api.path}"
        answer = self._send(
            bodies.group(kind.api, "write"), label, self._method(kind, f"create_{kind.api.noun}"),
            bodies.sent(kind.api, body), repeatable=False,
        )  # fmt: skip
        created = bodies.answered(kind.api, answer)
        if not isinstance(created, Mapping) or "id" not in created:
            raise RequestFailed(label, "the answer carries no id", ambiguous=True)
        return dict(created)

    def update(self, kind: Kind, object_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        api = kind.api
        label = f"{'PATCH' if api.envelope else 'PUT'} {api.path}/{{id}}"
        answer = self._send(
            bodies.group(api, "write"), label, self._method(kind, f"{api.update_verb}_{api.noun}"),
            bodies.identifier(api, object_id), bodies.sent(api, body, object_id),
        )  # fmt: skip
        updated: dict[str, Any] = bodies.answered(api, answer)
        return updated

    def delete(self, kind: Kind, object_id: str) -> None:
        api = kind.api
        label = f"DELETE {api.path}/{{id}}"
        method = self._method(kind, f"{api.delete_verb}_{api.noun}")
        try:
            self._send(bodies.group(api, "write"), label, method, bodies.identifier(api, object_id))
        except RequestFailed as exc:
            if exc.status != 404:  # already gone, e.g. a retry after a lost response: the goal is met
                raise

    def backoff(self, failures: int) -> None:
        """Wait before trying again after the given number of failures, with jitter (less when waits are cut:
        the next try is then let go unsent)."""
        self._cut.wait(min(self._backoff * 2 ** (failures - 1), 8.0) * random.uniform(0.5, 1.0))  # noqa: S311

    @contextmanager
    def cut_waits(self) -> Iterator[None]:
        """Within, no request is sent: one about to be, or waiting for the rate limit or before a retry, is let
        go, and its caller gets Halted. For reads no longer wanted (sync.datadog.reads), whose threads obs
        waits for before it returns: they end with the requests under way, not after a rate limit's window."""
        self._cut.set()
        self._pacer.halt(True)
        try:
            yield
        finally:
            self._pacer.halt(False)
            self._cut.clear()

    def _method(self, kind: Kind, name: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(self._apis[kind.api.client], name)
        return method

    def validate(self, kind: Kind, body: Mapping[str, Any], object_id: str | None = None) -> list[str]:
        """The API's own verdict on a body, writing nothing: [] when valid, else its errors."""
        api = kind.api
        group = bodies.group(api, "validate")
        try:
            if object_id is None:
                self._send(group, f"POST {api.path}/validate", self._method(kind, f"validate_{api.noun}"), body)
            else:
                label = f"POST {api.path}/{{id}}/validate"
                method = self._method(kind, f"validate_existing_{api.noun}")
                self._send(group, label, method, bodies.identifier(api, object_id), body)
        except RequestFailed as exc:
            if exc.status == 400:
                return [exc.detail]
            raise
        return []

    def _send(
        self, group: str, label: str, method: Callable[..., Any], *args: Any, repeatable: bool = True, **kwargs: Any
    ) -> Any:
        """One request: paced, a 429 waits for the reset, transient failures retried when repeatable."""
        failures = throttles = 0
        while True:
            self._pacer.acquire(group)
            with self._lock:
                self.calls[label] += 1
            status: int | None = None
            try:
                response = method(*args, **kwargs)
                data = response.data  # unread until here (preload_content off): it too can time out or break off
            except ApiException as exc:
                status = exc.status
                self._pacer.release(group, exc.headers, limited=status == 429)
                if status == 429 and throttles < _MAX_THROTTLED:
                    throttles += 1
                    with self._lock:
                        self.throttled += 1
                    continue  # not a failure: acquire waits for the window to reset
                reason = described(status, exc.body, exc.headers, self.host)
                if status is None or status < 500:
                    raise RequestFailed(label, self._shown(reason), status) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                self._pacer.release(group, None)
                reason = _connection_problem(exc)
            else:
                self._pacer.release(group, response.headers)
                try:
                    return json.loads(data or b"null")
                except ValueError:  # a proxy's page with a 200, or an answer cut short
                    status = response.status
                    reason = described(status, (data or b"").decode("utf-8", "replace"), response.headers, self.host)
            failures += 1
            if not repeatable or failures >= self._attempts:
                raise RequestFailed(label, self._shown(reason), status, ambiguous=not repeatable, unsure=True)
            with self._lock:
                self.retried += 1
            self.backoff(failures)

    def _shown(self, text: str) -> str:
        """Error text from the other side (a proxy may echo headers): redacted whole, then cut, so a cut
        never leaves part of a key behind."""
        return cut(self._redact(text))


def client_class(name: str) -> Callable[[ApiClient], Any]:
    """A datadog-api-client class by its name below the package, as a kind's record gives it."""
    module, _, attribute = name.rpartition(".")
    found: Callable[[ApiClient], Any] = getattr(importlib.import_module(f"datadog_api_client.{module}"), attribute)
    return found


def _connection_problem(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    if isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
        return "could not connect"  # checked first: urllib3 files a refused connection under timeouts too
    if isinstance(reason, urllib3.exceptions.TimeoutError | TimeoutError):
        return "timed out"
    if isinstance(reason, urllib3.exceptions.SSLError):
        return f"TLS failed: {reason}"  # e.g. a proxy's certificate not trusted: say so, not "dropped"
    return f"the connection dropped without an answer ({type(reason).__name__})"
