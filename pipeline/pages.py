"""The HTML pages' templates (`pipeline/templates/`): one jinja2 environment, autoescaped,
over templates that extend `base.html.j2` (the pages' common style), and `render`, which
writes one page; the scripts and style the pages load (`pipeline/static/`, no network
at view time). Caller's thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

__all__ = ["STATIC", "TEMPLATES", "render"]

TEMPLATES = Path(__file__).with_name("templates")
#: The scripts and style the pages load, copied beside them (`<report>/static/`).
STATIC = Path(__file__).with_name("static")


def render(template: str, path: Path, **context: Any) -> Path:
    """`template` rendered with `context` into `path` (its directory created); `path`."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(env.get_template(template).render(**context), encoding="utf-8")
    return path
