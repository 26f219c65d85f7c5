"""The one module that talks to Datadog, through datadog-api-client: reads live state and writes changes.

Bodies go out and come back as plain JSON (the client's models are only used to validate, in apimodel), so
that what we diff is exactly what the server said. Requests are paced by the X-RateLimit-* headers, a 429
waits for the reset, and transient failures (5xx, timeouts, dropped connections) are retried, except a
create: its failure is ambiguous (it may have been committed) and is raised for the caller to look the key
up before creating again.
"""

from __future__ import annotations

import json
import random
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import urllib3
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import ApiException
from datadog_api_client.rest import RESTClientObject
from datadog_api_client.v1.api.dashboards_api import DashboardsApi
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.api.service_level_objective_corrections_api import ServiceLevelObjectiveCorrectionsApi
from datadog_api_client.v1.api.service_level_objectives_api import ServiceLevelObjectivesApi
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.api.key_management_api import KeyManagementApi

from sync.core.kinds import COMPOSITE, DASHBOARD, DOWNTIME, MONITOR, SLO, SLO_CORRECTION, Kind
from sync.core.resources import MANAGED_TAG
from sync.datadog.answers import Redactor, RestClient, cut, described
from sync.datadog.credentials import Endpoint
from sync.datadog.pacing import Pacer

MONITOR_PAGE = 1000  # the list endpoint's maximum page size
DASHBOARD_PAGE = 1000
DOWNTIME_PAGE = 100  # the spec names no maximum; its example asks for 100
SLO_PAGE = 1000  # the list endpoint's default limit
CORRECTION_PAGE = 100  # the spec names no maximum (its default is 25); the answer's total ends the list
_MAX_THROTTLED = 100  # 429s in a row for one request before it counts as failed


@dataclass(frozen=True)
class Api:
    """Where a kind lives in the API: its path and the client class whose create_/update_/delete_ methods
    take it. Each kind's record in sync.core.kinds has one of these."""

    path: str
    client: Callable[[ApiClient], Any]
    noun: str  # the method suffix: create_monitor
    # A JSON:API kind (v2) sends {"data": {"type", "attributes"}} and answers likewise; obs plans with the
    # attributes plus the id, so the envelope is put on and taken off here.
    envelope: str | None = None
    update_verb: str = "update"
    delete_verb: str = "delete"  # a v2 downtime is canceled, not deleted: it stays listed as canceled
    wrapped: bool = False  # answers carry the object in `data` (a create's and an update's as a list of one)
    update_id: bool = True  # an update's envelope carries the id (an SLO correction's has only the path's)
    # Fields a create sends and an update may not (the kind's fixed field: a change of it is a replacement).
    create_only: tuple[str, ...] = ()


APIS: Mapping[Kind, Api] = {
    MONITOR: Api("/api/v1/monitor", MonitorsApi, "monitor"),
    DASHBOARD: Api("/api/v1/dashboard", DashboardsApi, "dashboard"),
    COMPOSITE: Api("/api/v1/monitor", MonitorsApi, "monitor"),  # a monitor of type composite
    DOWNTIME: Api("/api/v2/downtime", DowntimesApi, "downtime", envelope="downtime", delete_verb="cancel"),
    SLO: Api("/api/v1/slo", ServiceLevelObjectivesApi, "slo", wrapped=True),
    SLO_CORRECTION: Api(
        "/api/v1/slo/correction",
        ServiceLevelObjectiveCorrectionsApi,
        "slo_correction",
        envelope="correction",
        update_id=False,
        create_only=("slo_id",),
    ),
}


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
        self._redact = Redactor((target.api_key, target.app_key))
        self.timeout = timeout
        self._client = _Client(config, pool=workers + 2)
        self._apis = {kind: api.client(self._client) for kind, api in APIS.items()}
        self._monitors = self._apis[MONITOR]
        self._dashboards = self._apis[DASHBOARD]
        self._pacer = Pacer(time.monotonic, time.sleep)
        self._attempts = attempts
        self._backoff = backoff
        self._lock = threading.Lock()
        self._shared: dict[str | None, list[dict[str, Any]]] | None = None  # see shared_reads
        self.calls: Counter[str] = Counter()
        self.retried = 0
        self.throttled = 0

    def close(self) -> None:
        self._client.close()

    @property
    def waited(self) -> float:
        return self._pacer.waited

    # Reads

    def managed_monitors(self, env: str | None) -> list[dict[str, Any]]:
        """Our monitors (of one environment), a thousand per call. The filter only saves calls: ownership is
        checked again on every object, so a looser server-side match can never make us touch a stranger."""
        return self._monitor_list(f"{MANAGED_TAG},env:{env}" if env else MANAGED_TAG)

    def all_monitors(self) -> list[dict[str, Any]]:
        return self._monitor_list(None)

    @contextmanager
    def shared_reads(self) -> Iterator[None]:
        """Within, a monitor list read again is answered from the first read: monitors and composites come
        from one endpoint, and each kind's reader asks for its own. Only for one plan's reads, never
        across writes."""
        self._shared = {}
        try:
            yield
        finally:
            self._shared = None

    def _monitor_list(self, tags: str | None) -> list[dict[str, Any]]:
        if self._shared is None:
            return list(self._monitor_pages(tags))
        if tags not in self._shared:
            self._shared[tags] = list(self._monitor_pages(tags))
        return self._shared[tags]

    def find_monitors(self, key_tag: str) -> list[dict[str, Any]]:
        return list(self._monitor_pages(key_tag))

    def monitors_tagged(self, tags: str) -> list[dict[str, Any]]:
        """The monitors that carry every one of these comma-separated tags, with their overall_state."""
        return list(self._monitor_pages(tags))

    def dashboard_summaries(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            page = self._send(
                "dashboards read",
                "GET /api/v1/dashboard",
                self._dashboards.list_dashboards,
                count=DASHBOARD_PAGE,
                start=len(found),
            )
            items = page.get("dashboards") or []
            found += items
            if last_page(len(items), DASHBOARD_PAGE):
                return found

    def dashboard(self, dashboard_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self._send(
            "dashboards read", "GET /api/v1/dashboard/{id}", self._dashboards.get_dashboard, dashboard_id
        )
        return found

    def downtimes(self) -> list[dict[str, Any]]:
        """Every downtime that is not canceled or ended (a canceled one stays listed for about two days), as
        its attributes plus id."""
        found: list[dict[str, Any]] = []
        offset = largest = 0
        api = self._apis[DOWNTIME]
        while True:
            page = self._send(
                "downtimes read",
                "GET /api/v2/downtime",
                api.list_downtimes,
                page_offset=offset,
                page_limit=DOWNTIME_PAGE,
            )
            items = page.get("data") or []
            found += [_attributes(item) for item in items]
            offset += len(items)
            # The answer says how many there are: a page capped below what was asked does not end the list
            # early (a downtime missed would be created twice).
            total = ((page.get("meta") or {}).get("page") or {}).get("total_filtered_count")
            done = offset >= total if isinstance(total, int) else last_page(len(items), DOWNTIME_PAGE, largest)
            if not items or done:
                return [d for d in found if d.get("status") not in ("canceled", "ended")]
            largest = max(largest, len(items))

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

    def managed_slos(self) -> list[dict[str, Any]]:
        """Our SLOs of every environment, a thousand per call. The list filters on one tag only; ownership
        and environment are checked again on every object."""
        found: list[dict[str, Any]] = []
        while True:
            page = self._send(
                "slos read",
                "GET /api/v1/slo",
                self._apis[SLO].list_slos,
                tags_query=MANAGED_TAG,
                limit=SLO_PAGE,
                offset=len(found),
            )
            items = (page or {}).get("data") or []
            found += items
            if last_page(len(items), SLO_PAGE):
                return found

    def slo_corrections(self) -> list[dict[str, Any]]:
        """Every SLO correction of the org (the list filters nothing), as its attributes plus id."""
        found: list[dict[str, Any]] = []
        largest = 0
        while True:
            page = self._send(
                "slo_corrections read",
                "GET /api/v1/slo/correction",
                self._apis[SLO_CORRECTION].list_slo_correction,
                offset=len(found),
                limit=CORRECTION_PAGE,
            )
            items = (page or {}).get("data") or []
            found += [_attributes(item) for item in items]
            # A page capped below what was asked does not end the list early when the answer says how many.
            total = (((page or {}).get("meta") or {}).get("page") or {}).get("total_count")
            done = len(found) >= total if isinstance(total, int) else last_page(len(items), CORRECTION_PAGE, largest)
            if not items or done:
                return found
            largest = max(largest, len(items))

    def _monitor_pages(self, tags: str | None) -> Iterator[dict[str, Any]]:
        filters: dict[str, Any] = {"monitor_tags": tags} if tags else {}
        page = largest = 0
        while True:
            items: list[dict[str, Any]] = self._send(
                "monitors read",
                "GET /api/v1/monitor",
                self._monitors.list_monitors,
                page=page,
                page_size=MONITOR_PAGE,
                **filters,
            )
            yield from items
            if last_page(len(items), MONITOR_PAGE, largest):
                return
            largest = max(largest, len(items))
            page += 1

    # Writes: a create is never repeated here (see RequestFailed.ambiguous)

    def create(self, kind: Kind, body: Mapping[str, Any]) -> dict[str, Any]:
        label = f"POST {APIS[kind].path}"
        created: dict[str, Any] = self._send(
            _group(kind, "write"), label, self._call(kind, "create"), _wrapped(kind, body), repeatable=False
        )
        if APIS[kind].envelope and isinstance(created, Mapping) and isinstance(created.get("data"), Mapping):
            created = _attributes(created["data"])
        created = _unwrapped(kind, created)
        if not isinstance(created, Mapping) or "id" not in created:
            raise RequestFailed(label, "the answer carries no id", ambiguous=True)
        return created

    def update(self, kind: Kind, object_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        api = APIS[kind]
        label = f"{'PATCH' if api.envelope else 'PUT'} {api.path}/{{id}}"
        updated: dict[str, Any] = self._send(
            _group(kind, "write"), label, self._call(kind, api.update_verb), _id(kind, object_id),
            _wrapped(kind, body, object_id),
        )  # fmt: skip
        if api.envelope and isinstance(updated, Mapping) and isinstance(updated.get("data"), Mapping):
            return _attributes(updated["data"])
        unwrapped: dict[str, Any] = _unwrapped(kind, updated)
        return unwrapped

    def delete(self, kind: Kind, object_id: str) -> None:
        label = f"DELETE {APIS[kind].path}/{{id}}"
        try:
            self._send(_group(kind, "write"), label, self._call(kind, APIS[kind].delete_verb), _id(kind, object_id))
        except RequestFailed as exc:
            if exc.status != 404:  # already gone, e.g. a retry after a lost response: the goal is met
                raise

    def backoff(self, failures: int) -> None:
        """Wait before trying again after the given number of failures, with jitter."""
        time.sleep(min(self._backoff * 2 ** (failures - 1), 8.0) * random.uniform(0.5, 1.0))  # noqa: S311

    def _call(self, kind: Kind, verb: str) -> Callable[..., Any]:
        method: Callable[..., Any] = getattr(self._apis[kind], f"{verb}_{APIS[kind].noun}")
        return method

    def validate(self, kind: Kind, body: Mapping[str, Any], object_id: str | None = None) -> list[str]:
        """The API's own verdict on a body, writing nothing: [] when valid, else its errors."""
        api = APIS[kind]
        group = _group(kind, "validate")
        try:
            if object_id is None:
                self._send(group, f"POST {api.path}/validate", self._call(kind, "validate"), body)
            else:
                label = f"POST {api.path}/{{id}}/validate"
                self._send(group, label, self._call(kind, "validate_existing"), _id(kind, object_id), body)
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


API_DEFAULT_PAGE = 100  # what both list endpoints return when asked for no page size


def last_page(length: int, asked: int, largest: int = 0) -> bool:
    """Whether a page of `length` items ends a list read `asked` at a time: an empty page, or a short one,
    so a short page costs no trailing empty read. A page of exactly the API's default size may be a cap
    below what we asked (a proxy, a server change), and one shorter than an earlier page is the end even
    then: missing monitors would make us create them twice."""
    if length == 0:
        return True
    if largest:  # pages came before: the server's page size is known
        return length < largest
    return length < asked and length != API_DEFAULT_PAGE


def _wrapped(kind: Kind, body: Mapping[str, Any], object_id: str | None = None) -> Mapping[str, Any]:
    api = APIS[kind]
    if object_id is not None and api.create_only:
        body = {k: v for k, v in body.items() if k not in api.create_only}
    if api.envelope is None:
        return body
    identified = {"id": object_id} if object_id and api.update_id else {}
    return {"data": {"type": api.envelope, "attributes": dict(body), **identified}}


def _attributes(data: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON:API object as obs plans with it: its attributes and its id."""
    return {**(data.get("attributes") or {}), "id": data.get("id")}


def _unwrapped(kind: Kind, answer: Any) -> Any:
    """The object an answer carries: an SLO create or update answers `{"data": [the SLO]}`."""
    if not APIS[kind].wrapped or not isinstance(answer, Mapping):
        return answer
    data = answer.get("data")
    if isinstance(data, list):
        return data[0] if len(data) == 1 else None
    return data


def _group(kind: Kind, verb: str) -> str:
    """The rate-limit budget a request draws on: the endpoint's, shared by the kinds it serves (composites
    are monitors), so that pacing by one kind's headers accounts for the other's requests."""
    return f"{APIS[kind].noun}s {verb}"


def _id(kind: Kind, object_id: str) -> int | str:
    return int(object_id) if kind.numeric_id else object_id


def _connection_problem(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    if isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionRefusedError):
        return "could not connect"  # checked first: urllib3 files a refused connection under timeouts too
    if isinstance(reason, urllib3.exceptions.TimeoutError | TimeoutError):
        return "timed out"
    if isinstance(reason, urllib3.exceptions.SSLError):
        return f"TLS failed: {reason}"  # e.g. a proxy's certificate not trusted: say so, not "dropped"
    return f"the connection dropped without an answer ({type(reason).__name__})"
