"""MkDocs hooks: the pages that come from the code are made from it at build time, so they cannot drift.

- `reference/<file>.md`: every key of each definition file, from its JSON Schema (sync/definitions/schemas/).
- The table of how soon each metric of the example pages, from `bench/earliest_pages.py`, wherever a page
  holds the marker `<!-- obs:earliest-pages -->`; what `obs validate` prints for the example, at
  `<!-- obs:validate-example -->`.
- The README is not part of the site, so MkDocs would not check its links: the build fails on one that does not
  resolve, so `mkdocs build --strict` is the one check of every page and link.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "sync" / "definitions" / "schemas"
EARLIEST = "<!-- obs:earliest-pages -->"
VALIDATE = "<!-- obs:validate-example -->"

# The definition file each schema checks, and the page that explains it.
FILES = {
    "queues": ("queues.yaml", "definitions/queues.md"),
    "catalogue": ("catalogue.yaml", "catalogue.md"),
    "environment": ("environments/<env>.yaml", "definitions/environments.md"),
    "metric": ("monitors/<metric>.yaml", "definitions/metrics.md"),
    "settings": ("monitor settings: a metric, its by_class.<class>, and the overrides", "definitions/metrics.md"),
    "dashboard": ("dashboards/<name>.yaml", "definitions/dashboards.md"),
    "scenario": ("scenarios/<name>.yaml", "testing.md"),
}
# Where in its own file a part of a schema that another one reuses sits, by its `$defs` pointer.
PARTS = {"#/$defs/queue_fields": "a queue in ", "#/$defs/slo": "`classes.<class>.slo` in "}
# What a key of a free-form mapping stands for, by the mapping's name.
MAP_KEYS = {"notify": "audience", "by_class": "class", "classes": "class"}

Schema = Mapping[str, Any]
Row = tuple[str, str, bool, str]


# Hooks


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name in schema_names():
        if name not in FILES:
            raise PluginError(f"{name}.schema.json has no reference page: add it to FILES in docs/hooks.py")
        files.append(File.generated(config, f"reference/{name}.md", content=reference_page(name)))
    return files


def on_pre_build(config: MkDocsConfig) -> None:
    broken = broken_links(ROOT / "README.md")
    if broken:
        raise PluginError("README.md links to what does not exist: " + ", ".join(broken))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if EARLIEST in markdown:
        markdown = markdown.replace(EARLIEST, earliest_pages())
    if VALIDATE in markdown:
        markdown = markdown.replace(
            VALIDATE, f"`{_run('-m', 'sync.cli', '--definitions', str(ROOT), 'validate').strip()}`"
        )
    return markdown


# The schema reference


def schema_names() -> list[str]:
    return sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))


def _load(name: str) -> Schema:
    """A schema with every `$ref` made absolute (`file#/pointer`), so a node means the same wherever it is read."""

    def absolute(node: Any) -> Any:
        if isinstance(node, list):
            return [absolute(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: absolute(value) for key, value in node.items()}
        if isinstance(out.get("$ref"), str) and out["$ref"].startswith("#"):
            out["$ref"] = f"{name}.schema.json{out['$ref']}"
        return out

    loaded: Schema = absolute(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))
    return loaded


def reference_page(name: str) -> str:
    schema = _load(name)
    described, guide = FILES[name]
    title = described.split(":")[0].capitalize() if name == "settings" else f"`{described}`"
    summary = str(schema.get("title", "")).removeprefix("obs ")
    lines = [
        f"# {title}",
        "",
        f"{_escaped(summary[:1].upper() + summary[1:])}.",
        "",
        f"Generated from `sync/definitions/schemas/{name}.schema.json`, the JSON Schema `obs validate` checks this "
        f"file against; [the guide](../{guide}) explains how the keys work together. No key other than those listed "
        "is allowed; a key marked required is required wherever its parent is given (for a key with several forms, "
        "in its form). `obs schemas --out DIR` writes the schemas out for your editor.",
        "",
        "| key | type | required | what it is |",
        "|---|---|---|---|",
    ]
    for key, kind, required, text in rows(name):
        lines.append(f"| `{key}` | {kind} | {'yes' if required else ''} | {text} |")
    return "\n".join(lines) + "\n"


def rows(name: str) -> list[Row]:
    """One row per key of a schema, depth first in the schema's order: a mapping's free keys as `<name>`, a
    list's items as `[]`, and the keys another schema defines as a link to its page."""
    return list(_walk(_resolved(_load(name)), name, "", set()))


def _walk(node: Schema, doc: str, prefix: str, required: set[str]) -> Iterator[Row]:
    needed = set(node.get("required", ())) | required
    for key, child in _properties(node, doc).items():
        if key == "$schema":
            continue
        path = f"{prefix}{key}"
        link = _elsewhere(child, doc)
        if link:
            yield path, "object", key in needed, _sentence(link)
            continue
        resolved = _resolved(child)
        yield path, _type(resolved), key in needed, _text(resolved)
        yield from _children(resolved, doc, path, _depends(node, key))
    for part in node.get("allOf", ()):
        link = _elsewhere(part, doc)
        if link:
            yield f"{prefix}*", "", False, f"Also {link}."


def _children(node: Schema, doc: str, path: str, required: set[str]) -> Iterator[Row]:
    for each in [node, *node.get("oneOf", ())]:
        form = _resolved(each)
        if _properties(form, doc) or form.get("allOf"):
            yield from _walk(form, doc, f"{path}.", required)
        free = form.get("additionalProperties")
        if isinstance(free, dict):
            last = path.rsplit(".", 1)[-1]
            key = f"{path}.<{MAP_KEYS.get(last, last.removesuffix('s'))}>"
            link = _elsewhere(free, doc)
            inner = _resolved(free)
            yield key, "object" if link else _type(inner), False, _sentence(link) if link else _text(inner)
            if not link:
                yield from _children(inner, doc, key, set())
        items = form.get("items")
        if isinstance(items, dict):
            yield from _children(_resolved(items), doc, f"{path}[]", set())


def _properties(node: Schema, doc: str) -> dict[str, Schema]:
    """The node's own keys, and those of the parts of its allOf that are defined in this schema."""
    found: dict[str, Schema] = dict(node.get("properties", {}))
    for part in node.get("allOf", ()):
        if not _elsewhere(part, doc):
            found.update({k: v for k, v in _properties(_resolved(part), doc).items() if k not in found})
    return found


def _depends(node: Schema, key: str) -> set[str]:
    """Keys of `key` that become required when it is given (dependentSchemas)."""
    dependent = node.get("dependentSchemas", {}).get(key, {})
    return set(dependent.get("properties", {}).get(key, {}).get("required", ()))


def _resolved(node: Schema) -> Schema:
    """A node with a `$ref`, merged with what it refers to (its own keys win)."""
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    merged = {**_target(ref), **{k: v for k, v in node.items() if k != "$ref"}}
    return _resolved(merged) if "$ref" in merged else merged


def _target(ref: str) -> Schema:
    file, _, pointer = ref.partition("#")
    node: Any = _load(file.removesuffix(".schema.json"))
    for part in pointer.strip("/").split("/") if pointer else ():
        node = node[part]
    result: Schema = node
    return result


def _elsewhere(node: Schema, doc: str) -> str:
    """For a `$ref` to an object another schema defines: a link to its page, instead of its keys again."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or ref.startswith(f"{doc}.schema.json"):
        return ""
    other = ref.split(".schema.json")[0]
    target = _resolved(_target(ref))
    if not _properties(target, other) and not target.get("allOf"):
        return ""
    what = node.get("description") or target.get("description") or ""
    text = f"{_escaped(what)}: " if what else ""
    where = PARTS.get(ref.split(".schema.json", 1)[1], "")
    return f"{text}the keys of {where}[{FILES[other][0].split(':')[0]}]({other}.md)"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _type(node: Schema) -> str:
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v) if v is None else v}`" for v in node["enum"])
    if "oneOf" in node:
        return " or ".join(dict.fromkeys(_type(_resolved(form)) for form in node["oneOf"]))
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        items = _resolved(node.get("items", {}))
        inner = _type(items) if "type" in items or "enum" in items else ""
        return f"list of {inner}" if inner and inner not in ("object", "list") else "list"
    if kind is None and ("properties" in node or "allOf" in node or "required" in node):
        return "object"
    return str(kind) if kind else "any"


def _text(node: Schema) -> str:
    parts = [_escaped(node["description"])] if "description" in node else []
    if node.get("required") and not node.get("properties") and not node.get("allOf"):
        parts.append("Requires " + ", ".join(f"`{key}`" for key in node["required"]))
    limits = _limits(node)
    if limits:
        parts.append(limits)
    items = node.get("items")
    if isinstance(items, dict) and node.get("type") == "array":
        item = _resolved(items)
        if "properties" not in item and (item.get("description") or _limits(item)):
            each = " ".join(_sentence(p) for p in (_escaped(item.get("description", "")), _limits(item)) if p)
            parts.append(f"Each item: {each[:1].lower()}{each[1:]}")
    if "x-fix" in node and "description" not in node:
        parts.append(_escaped(node["x-fix"]))
    return " ".join(_sentence(p) for p in parts)


def _limits(node: Schema) -> str:
    found = [f"{words} {node[key]}" for key, words in (("minimum", "at least"), ("maximum", "at most")) if key in node]
    found += _sizes(node)
    if "pattern" in node:
        found.append(f"matches `{node['pattern']}`")
    names = node.get("propertyNames", {})
    if "pattern" in names:
        found.append(f"keys match `{names['pattern']}`")
    return _sentence("; ".join(found)) if found else ""


def _sizes(node: Schema) -> list[str]:
    found = []
    if node.get("minLength") == 1:
        found.append("not empty")
    elif "minLength" in node:
        found.append(f"at least {node['minLength']} characters")
    if "maxLength" in node:
        found.append(f"at most {node['maxLength']} characters")
    for key, noun in (("minItems", "item"), ("maxItems", "item"), ("minProperties", "key")):
        if key in node:
            words = "at least" if key.startswith("min") else "at most"
            found.append(f"{words} {node[key]} {noun}{'s' if node[key] != 1 else ''}")
    if node.get("uniqueItems"):
        found.append("no repeats")
    return found


_CODE = re.compile(r"(`[^`]*`)")


def _escaped(text: str) -> str:
    """Schema text as inert Markdown in a table cell: code spans kept, everything else escaped."""
    out = []
    for part in _CODE.split(text):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(part)
            continue
        html = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
        out.append(re.sub(r"([\\*_\[\]])", r"\\\1", html))
    return "".join(out)


# The earliest pages of the example (bench/earliest_pages.py), once per build of the same inputs

_tables: dict[str, str] = {}


def earliest_pages() -> str:
    inputs = hashlib.sha256()
    for path in sorted(
        [*ROOT.glob("*.yaml"), *ROOT.glob("*/*.yaml"), *(ROOT / "sync").rglob("*.py"), ROOT / "bench/earliest_pages.py"]
    ):
        inputs.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    digest = inputs.hexdigest()
    if digest not in _tables:
        _tables[digest] = _run(str(ROOT / "bench" / "earliest_pages.py"))
    return _tables[digest]


def _run(*args: str) -> str:
    """The output of this Python on these arguments, run from the repository's root (its code, not another)."""
    run = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False, cwd=ROOT)
    if run.returncode != 0 or not run.stdout:
        raise PluginError(f"{' '.join(args)} failed (exit {run.returncode}): {run.stderr[-2000:]}")
    return run.stdout


# The README's links

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(readme: Path) -> list[str]:
    """Relative links of a Markdown file whose file, or heading anchor, does not exist."""
    broken = []
    for target in _LINK.findall(readme.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (readme.parent / path).resolve() if path else readme
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in _anchors(file)):
            broken.append(target)
    return broken


def _anchors(page: Path) -> set[str]:
    """The ids MkDocs and GitHub give a page's headings (lowercase, punctuation dropped, spaces as dashes)."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", h.replace("`", "")).strip().lower()) for h in headings}
