// The layout as a picture (R11-R15, R17): the opening double in the middle with its four
// arms, other doubles crosswise with their three branches, each open end marked with its
// value, the ends owed (R17) drawn with a double dashed ring and named "owed".
import {svg} from "./dom.js";
import {halves, shown, tileName} from "./tiles.js";

const UNIT = 28;  // one half of a tile, in SVG units
const EAST = [1, 0], WEST = [-1, 0], NORTH = [0, -1], SOUTH = [0, 1];

const add = (a, d, k = 1) => [a[0] + d[0] * k, a[1] + d[1] * k];
const left = (d) => [d[1], -d[0]];
const right = (d) => [-d[1], d[0]];

/** The rectangle of a piece `along` long in direction `d` and `across` wide, centred at c. */
function rect(c, d, along, across) {
  const [w, h] = d[0] ? [along, across] : [across, along];
  return {x: c[0] - w / 2, y: c[1] - h / 2, w, h};
}

function overlaps(a, b) {
  const e = 0.01;
  return a.x + e < b.x + b.w && b.x + e < a.x + a.w && a.y + e < b.y + b.h && b.y + e < a.y + a.h;
}

const MAX_JUMP = 8;

/** Where a tile goes on an end at anchor `a` facing `d`: straight on if there is room, else
 * turning left or right (a corner); if all three are taken, as far on as there is room, tied
 * to its end by a dotted line; if none is free, straight on regardless. */
function fit(a, d, isDouble, taken) {
  for (let jump = 0; jump <= MAX_JUMP; jump++) {
    const from = add(a, d, jump);
    const tries = [[from, d], [add(from, d, 0.5), left(d)], [add(from, d, 0.5), right(d)]];
    for (const [anchor, dir] of tries) {
      const spot = shape(anchor, dir, isDouble);
      if (!taken.some((r) => overlaps(r, spot.box))) return {...spot, link: jump ? [a, anchor] : null};
    }
  }
  return {...shape(a, d, isDouble), link: null};
}

/** A double lies across its direction, one unit deep, with three new ends (straight on,
 * then the sides: R15); any other tile lies along it, two units long, with one. */
function shape(a, d, isDouble) {
  if (isDouble) {
    const c = add(a, d, 0.5);
    return {c, d, box: rect(c, d, 1, 2), axis: left(d),
            ends: [[add(a, d), d], [add(c, left(d)), left(d)], [add(c, right(d)), right(d)]]};
  }
  const c = add(a, d);
  return {c, d, box: rect(c, d, 2, 1), axis: d, ends: [[add(a, d, 2), d]]};
}

/** The opening double: its long axis east-west, its ends east, west, north, south (R12);
 * All Fives' lead of another tile lies east-west too, its first half's end west (F8). */
function opening(isDouble) {
  const c = [0, 0];
  const ends = isDouble ? [[[1, 0], EAST], [[-1, 0], WEST], [[0, -0.5], NORTH], [[0, 0.5], SOUTH]]
    : [[[-1, 0], WEST], [[1, 0], EAST]];
  return {c, d: EAST, box: rect(c, EAST, 2, 1), axis: EAST, link: null, ends};
}

/** Place every tile of `tiles` ({tile, end, expose}, in the order played); `newEnds[i]` are
 * the ids the i-th play opened (its tile_played event's `new_ends`). */
export function place(tiles, newEnds) {
  const ends = new Map(), pieces = [];
  tiles.forEach((played, i) => {
    const [a, b] = halves(played.tile);
    const from = ends.get(played.end);
    let spot;
    if (played.end === null) spot = opening(a === b);
    else if (from) spot = fit(from[0], from[1], a === b, pieces.map((p) => p.box));
    else return;  // an end this page never learnt of: the tile is listed, not drawn
    (newEnds[i] || []).forEach((id, k) => { if (spot.ends[k]) ends.set(id, spot.ends[k]); });
    pieces.push({...spot, ...played, near: nearHalf(played, a, b)});
  });
  return {pieces, ends};
}

/** Which half touches the end: the one not left showing (a declared spinner half shows). */
function nearHalf(played, a, b) {
  if (played.end === null || a === b) return a;
  const digit = a === "S" ? b : a;
  if (Number(digit) === played.expose) return digit === a ? b : a;
  return digit;
}

/** Draw the layout into `box`. `owed`: end ids a play must go on (R17); `targets`: end ids
 * the chosen tile can go on, drawn as buttons calling `onEnd(id)`. */
export function drawLayout(box, layout, newEnds, {owed = [], targets = [], onEnd} = {}) {
  const {pieces, ends} = place(layout.tiles, newEnds);
  const boxes = pieces.map((p) => p.box);
  const taken = [...boxes], spots = [];
  const marks = layout.ends.map((end) => {
    const where = ends.get(end.id);
    if (!where) return null;
    const spot = markSpot(where, taken);
    spots.push(spot);
    return endMark(end, where[0], spot, {owed: owed.includes(end.id),
                                         target: targets.includes(end.id), onEnd});
  });
  const picture = svg("svg", {viewBox: viewBox(boxes, spots), role: "group",
                              "aria-label": caption(layout, owed), class: "board"},
    ...pieces.map(piece), ...marks);
  box.replaceChildren(picture);
}

const MARK = 0.45;  // half the side of the square an end's mark takes, in units
const MARK_STEPS = 6;  // how many half units beyond its end a mark may move to find room

/** Where an end's mark goes: half a unit beyond the end, or as little further on as leaves
 * it clear of every tile and mark drawn; where it belongs if nothing is clear. */
function markSpot([a, d], taken) {
  for (let step = 1; step <= MARK_STEPS; step++) {
    const m = add(a, d, step / 2);
    const box = {x: m[0] - MARK, y: m[1] - MARK, w: 2 * MARK, h: 2 * MARK};
    if (!taken.some((r) => overlaps(r, box))) {
      taken.push(box);
      return m;
    }
  }
  return add(a, d, 0.5);
}

function caption(layout, owed) {
  if (!layout.tiles.length) return "The layout is empty";
  const open = layout.ends.map((e) => `${e.id} ${e.value}${owed.includes(e.id) ? " owed" : ""}`);
  return `The layout: ${layout.tiles.length} tiles; open ends ${open.join(", ")}`;
}

/** The picture's box, centred on the opening double (R12: it lies in the middle). */
function viewBox(boxes, spots) {
  let reach = [5, 3];  // at least this wide and high: a lone tile is not drawn huge
  const see = (x, y) => { reach = [Math.max(reach[0], Math.abs(x)), Math.max(reach[1], Math.abs(y))]; };
  for (const b of boxes) { see(b.x, b.y); see(b.x + b.w, b.y + b.h); }
  for (const m of spots) see(...m);
  const [w, h] = reach.map((r) => r + 0.8);
  return [-w, -h, 2 * w, 2 * h].map((v) => (v * UNIT).toFixed(1)).join(" ");
}

function piece(p) {
  const {x, y, w, h} = p.box;
  const [a, b] = halves(p.tile);
  const far = p.near === a ? b : a;
  const label = p.end === null ? (p.expose === null ? `lead tile ${tileName(p.tile)}`
    : `opening double ${tileName(p.tile)}, standing for ${p.expose}`)
    : `tile ${tileName(p.tile)} on ${p.end}, leaving ${p.expose}`;
  const mid = p.c;
  const split = p.axis[0]
    ? {x1: mid[0] * UNIT, x2: mid[0] * UNIT, y1: y * UNIT + 3, y2: (y + h) * UNIT - 3}
    : {x1: x * UNIT + 3, x2: (x + w) * UNIT - 3, y1: mid[1] * UNIT, y2: mid[1] * UNIT};
  const link = p.link && svg("line", {x1: p.link[0][0] * UNIT, y1: p.link[0][1] * UNIT,
    x2: p.link[1][0] * UNIT, y2: p.link[1][1] * UNIT, class: "link"});
  return svg("g", {class: "piece", role: "img", "aria-label": label},
    svg("title", {}, label), link,
    svg("rect", {x: x * UNIT + 1, y: y * UNIT + 1, width: w * UNIT - 2, height: h * UNIT - 2,
                 rx: 4, class: "tile-body"}),
    svg("line", {...split, class: "tile-split"}),
    halfText(add(mid, p.axis, -0.5), p.near, null),
    halfText(add(mid, p.axis, 0.5), far, far === "S" ? p.expose : null));
}

function halfText(at, half, declared) {
  const text = svg("text", {x: at[0] * UNIT, y: at[1] * UNIT, class: half === "S" ? "pip star" : "pip",
                            "text-anchor": "middle", "dominant-baseline": "central"}, shown(half));
  if (declared !== null) text.append(svg("tspan", {class: "declared", dy: "4"}, declared));
  return text;
}

/** An end's mark at `m`, tied to its end at `a` by a dotted line if it had to move on. */
function endMark(end, a, m, {owed, target, onEnd}) {
  const name = `open end ${end.id}, value ${end.value}${owed ? ", owed (R17)" : ""}`;
  const attrs = {class: `end${owed ? " owed" : ""}${target ? " target" : ""}`,
                 "data-end": end.id, "aria-label": target ? `play on ${name}` : name};
  if (target) {
    Object.assign(attrs, {role: "button", tabindex: "0", onclick: () => onEnd(end.id),
                          onkeydown: (e) => pressed(e) && onEnd(end.id)});
  } else attrs.role = "img";
  const moved = Math.hypot(m[0] - a[0], m[1] - a[1]) > 0.6;
  return svg("g", attrs,
    svg("title", {}, name),
    moved ? svg("line", {x1: a[0] * UNIT, y1: a[1] * UNIT, x2: m[0] * UNIT, y2: m[1] * UNIT,
                         class: "link"}) : null,
    owed ? svg("circle", {cx: m[0] * UNIT, cy: m[1] * UNIT, r: UNIT * 0.55, class: "owed-ring"}) : null,
    svg("circle", {cx: m[0] * UNIT, cy: m[1] * UNIT, r: UNIT * 0.4, class: "end-dot"}),
    svg("text", {x: m[0] * UNIT, y: m[1] * UNIT, "text-anchor": "middle",
                 "dominant-baseline": "central", class: "end-value"}, owed ? `${end.value}!` : end.value));
}

/** Whether a key press activates a button (Enter or Space). */
function pressed(event) {
  if (event.key !== "Enter" && event.key !== " ") return false;
  event.preventDefault();
  return true;
}
