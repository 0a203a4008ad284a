"""The layout's picture: an open end's mark (its value, "!" if owed) goes half a unit beyond
its end, or as little further on as keeps it clear of every tile and every other mark, tied
to its end by a dotted line. `crowded_layout.json` is a state's layout (and the ends each of
its plays opened) from a game of eight random AI seats whose marks overlapped before."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page

CROWDED = Path(__file__).with_name("crowded_layout.json")
DRAW = """async ({layout, newEnds, owed}) => {
  const {drawLayout} = await import('/web/js/layout.js');
  const box = document.createElement('div');
  box.id = 'layout';
  document.body.append(box);
  drawLayout(box, layout, newEnds, {owed});
}"""
"""Draw a layout with the page's own module (Playwright evaluates it, past the CSP)."""
OVERLAPS = """() => {
  const at = (e, name) => Number(e.getAttribute(name));
  const marks = [...document.querySelectorAll('#layout .end-dot')].map(
    (c) => ({x: at(c, 'cx'), y: at(c, 'cy'), r: at(c, 'r')}));
  const tiles = [...document.querySelectorAll('#layout .tile-body')].map(
    (r) => ({x: at(r, 'x'), y: at(r, 'y'), w: at(r, 'width'), h: at(r, 'height')}));
  const found = [];
  marks.forEach((a, i) => marks.slice(i + 1).forEach((b) => {
    if (Math.hypot(a.x - b.x, a.y - b.y) < a.r + b.r) found.push(['mark', a, b]);
  }));
  marks.forEach((m) => tiles.forEach((t) => {
    const x = Math.max(t.x, Math.min(m.x, t.x + t.w)), y = Math.max(t.y, Math.min(m.y, t.y + t.h));
    if (Math.hypot(m.x - x, m.y - y) < m.r) found.push(['tile', m, t]);
  }));
  return found;
}"""
"""Every mark that overlaps another mark or a tile, as drawn."""


def test_end_marks_move_on_to_stay_clear_of_tiles_and_of_each_other(page: Page,
                                                                   live: str) -> None:
    crowded = json.loads(CROWDED.read_text())
    page.goto(f"{live}/rules")
    page.evaluate(DRAW, crowded)
    assert page.locator("#layout .end").count() == len(crowded["layout"]["ends"])
    assert page.evaluate(OVERLAPS) == []
    assert page.locator("#layout .end line.link").count() >= 1  # a mark moved on, tied back
