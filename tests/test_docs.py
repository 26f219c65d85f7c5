"""The documentation keeps its promises: the README stays a map that runs the site's build, the files Getting
started shows are definitions obs accepts, and the schema reference the build generates lists every key."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sync.cli.app import main
from tests.conftest import ROOT

DOCS = ROOT / "docs"
SCHEMAS = ROOT / "sync" / "definitions" / "schemas"


def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_a_map_whose_test_command_builds_the_site_strictly() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    block = readme.split("## Quickstart", 1)[1].split("```", 2)[1]
    command = block.splitlines()[2]  # what .ci/run runs: the block's second line (after the fence's own)
    assert "mkdocs build --strict" in command
    assert " -q" not in command.split("mkdocs build", 1)[1].split("&&", 1)[0]  # -q hides the warnings strict counts


def test_readme_links_are_checked_and_resolve(tmp_path: Path) -> None:
    docs = hooks()
    assert docs.broken_links(ROOT / "README.md") == []
    page = tmp_path / "page.md"
    page.write_text("# A heading\n")
    (tmp_path / "map.md").write_text("[a](page.md) [b](page.md#a-heading) [c](gone.md) [d](page.md#nowhere) [e](#x)")
    assert docs.broken_links(tmp_path / "map.md") == ["gone.md", "page.md#nowhere", "#x"]


def test_the_files_getting_started_shows_validate_and_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = (DOCS / "getting-started.md").read_text()
    files = re.findall(r'```yaml title="([^"]+)"\n(.*?)```', page, flags=re.DOTALL)
    assert {name for name, _ in files} >= {"queues.yaml", "environments/prod.yaml"}
    for name, text in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert main(["--definitions", str(tmp_path), "validate"]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["--definitions", str(tmp_path), "plan", "--env", "prod", "--offline", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    said = re.search(r"plans (\d+) objects", page)
    assert said is not None
    assert len(plan["changes"]) == int(said.group(1))


def _keys(node: Any) -> set[str]:
    """Every property name a schema defines, wherever it sits."""
    found: set[str] = set()
    if isinstance(node, dict):
        found |= set(node.get("properties", {})) - {"$schema"}
        for value in node.values():
            found |= _keys(value)
    elif isinstance(node, list):
        for item in node:
            found |= _keys(item)
    return found


@pytest.mark.parametrize("schema", sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.json")))
def test_the_generated_reference_lists_every_key_of_its_schema(schema: str) -> None:
    docs = hooks()
    rows = docs.rows(schema)
    listed = {key.rsplit(".", 1)[-1].removesuffix("[]") for key, *_ in rows}
    assert _keys(json.loads((SCHEMAS / f"{schema}.schema.json").read_text())) - listed == set()
    page = docs.reference_page(schema)
    assert all(f"| `{key}` |" in page for key, *_ in rows)
