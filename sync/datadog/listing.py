"""What is live in Datadog, for any kind, as its record's `Listing` says: listed in as few calls as its list
endpoint allows, found by key, and owned as the kind's marker says (`Kind.owner`, the one reader of it).

A list that filters on several tags reads ours in this environment (and, before deciding to create, ours in
every environment, since an object whose env tag was removed by hand must be updated, not duplicated); one
that filters on our tag alone reads ours in every environment; one that filters nothing reads the org.
Ownership is checked again on every object read, so a looser server-side filter never makes obs touch a
stranger's object.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sync.core.keys import env_of
from sync.core.kinds import Kind
from sync.core.namespaces import KEY_TAG_PREFIX, MANAGED_TAG
from sync.core.plan import Live, claimed
from sync.core.resources import Resource
from sync.datadog import bodies
from sync.datadog.client import Datadog, RequestFailed

API_DEFAULT_PAGE = 100  # what the list endpoints return when asked for no page size


def listed(dd: Datadog, kind: Kind, env: str, desired: Sequence[Resource] = (), *, adopt: bool = False) -> list[Live]:
    """The live objects a plan of `env` compares with: with `adopt`, every one the list can give, to find
    the ones to take over. Where the list holds summaries, only the objects that carry a marker of this
    environment or share a title with a desired one are read whole."""
    found = objects(dd, kind, tags(dd, kind, env, adopt=adopt), expected=expected(kind, desired))
    if kind.listing.detail:
        titles = {r.title.strip() for r in desired if r.kind == kind}
        found = [
            whole
            for summary in found
            if _worth_reading(dd, kind, summary, env, titles)
            for whole in _read(dd, kind, summary)
        ]
    return _live(dd, kind, found)


def tags(dd: Datadog, kind: Kind, env: str, *, adopt: bool = False) -> str | None:
    """The tags a plan of `env` asks the kind's list for (see above)."""
    if kind.listing.filters == "env":
        return None if adopt else f"{_ours(dd)},env:{env}"
    return MANAGED_TAG if kind.listing.filters == "ours" else None


def expected(kind: Kind, desired: Sequence[Resource]) -> int:
    """How many objects the kind's list likely holds: what the definitions want of every kind listed with it
    (monitors and composites share a list)."""
    return sum(r.kind.api.path == kind.api.path for r in desired)


def wider(dd: Datadog, kind: Kind) -> list[Live]:
    """Every object with our marker, whatever its environment (a kind whose record has `wider`)."""
    return _live(dd, kind, objects(dd, kind, MANAGED_TAG if kind.listing.filters != "none" else None))


def _ours(dd: Datadog) -> str:
    """The tags all of this definitions set's objects carry: its namespace's too, unless it takes over objects
    written without one (a list cannot ask for a tag's absence, so a set without a namespace reads them all)."""
    ownership = dd.ownership
    return MANAGED_TAG if ownership.adopt_unnamespaced else ",".join(ownership.monitor_tags())


def find(dd: Datadog, kind: Kind, key: str) -> list[Live]:
    """The live objects that carry a key (a create's answer was lost), in as small a read as the list allows."""
    filters = kind.listing.filters
    tags = f"{KEY_TAG_PREFIX}{key}" if filters == "env" else MANAGED_TAG if filters == "ours" else None
    return [found for found in _live(dd, kind, objects(dd, kind, tags)) if found.key == key]


Expected = Callable[[], int | None]  # how many objects a list likely holds, once that is known


def objects(dd: Datadog, kind: Kind, tags: str | None = None, *, expected: int | Expected = 0) -> list[dict[str, Any]]:
    """Every object the kind's list gives (those of kinds sharing the endpoint too), filtered by these
    comma-separated tags where it can filter; without the ones whose status says they no longer count.
    A JSON:API object comes as its attributes plus its id. `expected`: how many there are likely to be (what
    the definitions hold), so that the pages they fill are asked for at once; or what says so once it is
    known (None until then), the list read page by page meanwhile."""
    params = {kind.listing.tags: tags} if tags else {}
    hint = expected if callable(expected) else lambda: expected
    return dd.remembered((kind.api.path, kind.listing.operation, tags), lambda: _pages(dd, kind, params, hint))


def live(dd: Datadog, kind: Kind, obj: Mapping[str, Any]) -> Live:
    """The object as the client's definitions set owns it: another namespace's is never ours."""
    return claimed(kind, str(obj["id"]), obj, dd.ownership, str(obj.get(kind.listing.created) or ""))


def _live(dd: Datadog, kind: Kind, objs: Iterable[Mapping[str, Any]]) -> list[Live]:
    """The objects of one kind among those its endpoint returned: no kind claims another's."""
    return [live(dd, kind, obj) for obj in objs if kind.listing.claims(obj)]


def _pages(dd: Datadog, kind: Kind, params: Mapping[str, Any], expected: Expected) -> list[dict[str, Any]]:
    listing = kind.listing
    found: list[dict[str, Any]] = []
    page = largest = 0
    ahead: list[Any] = []
    hinted = False
    while True:
        if not hinted and (count := expected()) is not None:
            ahead, hinted = _read_ahead(dd, kind, params, count, page), True
        at = page if listing.by_page else len(found)
        answer = (
            ahead.pop(0) if ahead else dd.list_page(kind, **{listing.offset: at, listing.limit: listing.size}, **params)
        )
        items = (answer if not listing.items else (answer or {}).get(listing.items)) or []
        found += [bodies.attributes(item) for item in items] if kind.api.envelope else items
        page += 1
        # Where the answer says how many there are, a page capped below what was asked does not end the list
        # early (an object missed would be created twice).
        total = (((answer or {}).get("meta") or {}).get("page") or {}).get(listing.total) if listing.total else None
        done = len(found) >= total if isinstance(total, int) else last_page(len(items), listing.size, largest)
        if not items or done:
            return [obj for obj in found if obj.get("status") not in listing.ended] if listing.ended else found
        largest = max(largest, len(items))


_AT_ONCE = 4  # pages asked for at a time when the definitions say how many there will be


def _read_ahead(dd: Datadog, kind: Kind, params: Mapping[str, Any], expected: int, first: int) -> list[Any]:
    """The answers of the pages from `first` on that `expected` objects fill, asked for at once where the list
    is paged by number: as many calls as reading them one after another (the last one short ends the list
    either way), in a fraction of the time on a big org. The list then goes on as usual after them."""
    listing = kind.listing
    pages = math.ceil(expected / listing.size) - first
    if not listing.by_page or pages < 2:
        return []
    with ThreadPoolExecutor(min(pages, _AT_ONCE)) as pool:
        asked = [
            pool.submit(dd.list_page, kind, **{listing.offset: page, listing.limit: listing.size}, **params)
            for page in range(first, first + pages)
        ]
        return [answer.result() for answer in asked]


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


def _worth_reading(dd: Datadog, kind: Kind, summary: Mapping[str, Any], env: str, titles: set[str]) -> bool:
    key = kind.owner(summary, dd.ownership)
    if key is not None:
        return env_of(key) == env
    return kind.title(summary).strip() in titles


def _read(dd: Datadog, kind: Kind, summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    try:
        return [dd.get(kind, str(summary["id"]))]
    except RequestFailed as exc:
        if exc.status != 404:  # deleted since it was listed: nothing to plan against
            raise
        return []
