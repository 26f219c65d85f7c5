"""What the other side said when a request failed, as one safe line: the API's error envelope, or, from a
proxy, a page that may be HTML in any charset and may echo our headers (keys included)."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

import urllib3
from datadog_api_client.exceptions import ApiException
from datadog_api_client.rest import RESTClientObject

SHOWN = 300  # characters of an answer shown in an error


def described(status: int | None, body: Any, headers: Mapping[str, str] | None, host: str) -> str:
    """One line for a failed answer: the API's own errors, or what kind of page came instead, from where."""
    if isinstance(body, Mapping | list):
        return f"HTTP {status}: {_errors(body)}"
    kind = (headers or {}).get("Content-Type") or (headers or {}).get("content-type") or "no content type"
    text = _plain(str(body or ""))
    return f"HTTP {status} from {host}, an answer that is not JSON ({kind})" + (f": {text}" if text else "")


def cut(text: str) -> str:
    """Shortened for display; only ever applied to text already redacted."""
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _errors(body: Mapping[str, Any] | list[Any]) -> str:
    """The API's error envelope, {"errors": [...]} with strings or JSON:API objects, as one line."""
    if isinstance(body, Mapping) and isinstance(body.get("errors"), list):
        parts = [e if isinstance(e, str) else str(e.get("detail") or e.get("title") or e) for e in body["errors"]]
        return "; ".join(parts) or "no details"
    return str(body) or "no details"


_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def _plain(text: str) -> str:
    """An HTML page's text, on one line."""
    return _SPACE.sub(" ", _TAG.sub(" ", text)).strip()


class RestClient(RESTClientObject):
    """The client's transport, but an error answer whose body is not UTF-8 (a proxy's page in ISO-8859-1)
    becomes an ApiException with its status, headers and text, instead of a UnicodeDecodeError raised while
    the client builds its exception."""

    def __init__(self, configuration: Any, maxsize: int) -> None:
        super().__init__(configuration, maxsize=maxsize)  # type: ignore[no-untyped-call]
        self._last = threading.local()
        pool = self.pool_manager
        last = self._last

        class _Remembering:
            def request(self, *args: Any, **kwargs: Any) -> urllib3.BaseHTTPResponse:
                response: urllib3.BaseHTTPResponse = pool.request(*args, **kwargs)
                last.response = response
                return response

            def __getattr__(self, name: str) -> Any:
                return getattr(pool, name)

        self.pool_manager = _Remembering()  # type: ignore[assignment]  # the same interface, delegated

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self._last.response = None
        try:
            return super().request(*args, **kwargs)  # type: ignore[no-untyped-call]
        except UnicodeDecodeError:
            response = self._last.response
            if response is None:
                raise
            failed = ApiException(status=response.status, reason=response.reason)  # type: ignore[no-untyped-call]
            failed.body = response.data.decode("utf-8", errors="replace")
            failed.headers = dict(response.headers)
            raise failed from None
