"""Pure: the links of an environment -> text for a terminal, markdown for a wiki or a ticket, json for tools."""

from __future__ import annotations

import json
from typing import Any

from sync.expand.oncall import Link, Page, Sheet
from sync.report import markdown as md

_OFFLINE = "ID unknown offline"
_MISSING = "not in Datadog yet (obs sync creates it)"


def render(sheet: Sheet, fmt: str, *, source: str, offline: bool = False) -> str:
    missing = _OFFLINE if offline else _MISSING
    return {"text": text, "json": as_json, "markdown": markdown}[fmt](sheet, source, missing)


def text(sheet: Sheet, source: str, missing: str = _MISSING) -> str:
    lines = [f"Links for {sheet.env} ({sheet.app}), IDs from {source}", "", "Dashboards:"]
    lines += _aligned([(d.title, d.url or missing) for d in sheet.dashboards], "  ")
    for queue in sheet.queues:
        lines += ["", f"{queue.name} ({queue.cls}, owned by {queue.owner}):"]
        lines += _aligned([(link.label, link.url) for link in queue.links], "  ")
        lines.append("  Monitors:")
        lines += _aligned([(m.title, m.url or missing) for m in queue.monitors], "    ")
    return "\n".join(lines) + "\n"


def _aligned(rows: list[tuple[str, str]], indent: str) -> list[str]:
    width = max((len(name) for name, _ in rows), default=0)
    return [f"{indent}{name.ljust(width)}  {value}" for name, value in rows]


def markdown(sheet: Sheet, source: str, missing: str = _MISSING) -> str:
    lines = [f"## Links for {md.code(sheet.env)}", "", f"IDs from {md.text(source)}.", "", "### Dashboards", ""]
    lines += [f"- {_md_page(d, missing)}" for d in sheet.dashboards]
    for queue in sheet.queues:
        lines += ["", f"### {md.code(queue.name)} ({md.text(queue.cls)}, owned by {md.text(queue.owner)})", ""]
        lines += [f"- {_md_link(link)}" for link in queue.links]
        lines += ["- Monitors:", *(f"  - {_md_page(m, missing)}" for m in queue.monitors)]
    return "\n".join(lines) + "\n"


def as_json(sheet: Sheet, source: str, missing: str = _MISSING) -> str:
    doc = {
        "env": sheet.env,
        "app": sheet.app,
        "ids_from": source,
        "dashboards": [_page_json(d) for d in sheet.dashboards],
        "queues": [
            {
                "queue": q.name,
                "class": q.cls,
                "owner": q.owner,
                "links": [{"label": link.label, "url": link.url, "command": link.command} for link in q.links],
                "monitors": [_page_json(m) for m in q.monitors],
            }
            for q in sheet.queues
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _page_json(page: Page) -> dict[str, Any]:
    return {"key": page.key, "title": page.title, "id": page.id, "url": page.url}


def _md_link(link: Link) -> str:
    return f"{md.text(link.label)}: {md.code(link.url)}" if link.command else md.link(link.label, link.url)


def _md_page(page: Page, missing: str) -> str:
    return md.link(page.title, page.url) if page.url else f"{md.text(page.title)}: {md.text(missing)}"
