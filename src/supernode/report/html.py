"""The HTML report: one self-contained file (styles and SVG figures inline, no network)."""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup, escape

from supernode.report.blocks import (
    Details,
    Figure,
    Heading,
    Label,
    Num,
    Paragraph,
    Section,
    Table,
    Txt,
)
from supernode.report.render import cell_html

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d2330;
background:#f7f8fa;line-height:1.45}
header{background:#1d2330;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c9d1e0}
nav{background:#fff;border-bottom:1px solid #dde1e8;padding:8px 32px;position:sticky;top:0}
nav a{margin-right:16px;color:#2a5db0;text-decoration:none;font-size:14px}
main{padding:8px 32px 48px;max-width:1300px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:18px 0;
padding:8px 20px 16px}
h2{font-size:19px;border-bottom:1px solid #eef0f4;padding-bottom:6px}
table{border-collapse:collapse;margin:10px 0 16px;font-size:13px;min-width:40%}
caption{text-align:left;font-weight:600;padding:4px 0;color:#394150}
th,td{border:1px solid #e3e6ec;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f6}td .num{font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:12px 0}figure svg{max-width:100%;height:auto}
figcaption{font-size:13px;color:#5a6372}
details{margin:4px 0;font-size:13px}summary{cursor:pointer;color:#2a5db0}
.v-fail,.v-error,.v-critical{color:#b3261e;font-weight:600}.v-warning{color:#9a6700}
.v-pass{color:#1b7f3b}.v-not_applicable,.v-not_evaluated{color:#6b7280}
h3{font-size:15px;margin:18px 0 4px}
"""

PAGE = jinja2.Template("""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title><style>{{ css }}</style></head>
<body><header><h1>{{ title }}</h1><p>{{ subtitle }}</p></header>
<nav>{% for s in sections %}<a href="#{{ s.id }}">{{ s.title }}</a>{% endfor %}</nav>
<main>{% for s in sections %}<section id="{{ s.id }}"><h2>{{ s.title }}</h2>
{% for b in s.html %}{{ b }}
{% endfor %}</section>{% endfor %}</main></body></html>
""", autoescape=True)


def block_html(block: Any, results: dict[str, Any]) -> Markup:
    """One block as HTML."""
    if isinstance(block, Paragraph):
        return Markup(f"<p>{''.join(cell_html(c, results) for c in block.cells)}</p>")
    if isinstance(block, Heading):
        return Markup(f"<h3>{''.join(cell_html(c, results) for c in block.cells)}</h3>")
    if isinstance(block, Table):
        head = "".join(f"<th>{escape(c)}</th>" for c in block.columns)
        body = "".join("<tr>" + "".join(f"<td>{cell_html(c, results)}</td>" for c in row)
                       + "</tr>" for row in block.rows)
        cls = f' class="{" ".join(block.classes)}"' if block.classes else ""
        return Markup(f"<table{cls}><caption>{escape(block.title)}</caption><thead><tr>{head}"
                      f"</tr></thead><tbody>{body}</tbody></table>")
    if isinstance(block, Figure):
        return Markup(f'<figure id="fig-{escape(block.name)}">{block.svg}'
                      f"<figcaption>{escape(block.caption)}</figcaption></figure>")
    if isinstance(block, Details):
        inner = "".join(str(block_html(p, results)) for p in block.paragraphs)
        return Markup(f"<details><summary>{escape(block.summary)}</summary>{inner}</details>")
    raise TypeError(f"not a block: {block!r}")


def render_html(sections: list[Section], results: dict[str, Any]) -> str:
    """The whole report page."""
    title = f"Design review: {results['cluster']['name']} × {results['workload']['name']}"
    subtitle = Markup(cell_html((Num(("cluster", "accelerators"), "count"), Label(" × "),
                                 Txt(("cluster", "accelerator")), Label(" · verdict: "),
                                 Txt(("verdict", "verdict"))), results))
    views = [{"id": s.id, "title": s.title, "html": [block_html(b, results) for b in s.blocks]}
             for s in sections]
    return PAGE.render(title=title, subtitle=subtitle, css=Markup(CSS), sections=views)
