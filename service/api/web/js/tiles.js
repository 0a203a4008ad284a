// Tiles in R2's notation (`3-9`, `5-S`, `S-S`): their halves, their value (R3), their names.
import {el} from "./dom.js";

export const STAR = "★";

/** The two halves of a tile, as written: digits or "S". */
export function halves(tile) {
  return tile.split("-");
}

/** A half as drawn: its digit, or ★ for a spinner half. */
export function shown(half) {
  return half === "S" ? STAR : half;
}

/** A half as read aloud. */
function spoken(half) {
  return half === "S" ? "spinner" : half;
}

/** A tile's name for screen readers: "3 and spinner". */
export function tileName(tile) {
  const [a, b] = halves(tile);
  return a === b ? `double ${spoken(a)}` : `${spoken(a)} and ${spoken(b)}`;
}

/** A tile's points (R3): its pips, 10 for a spinner half. */
export function tileValue(tile) {
  return halves(tile).reduce((sum, half) => sum + (half === "S" ? 10 : Number(half)), 0);
}

/** The tile as a small picture of its two halves (the page's tile, not a button). */
export function tileFace(tile) {
  return el("span", {class: "face", "aria-hidden": "true"},
    ...halves(tile).map((half) => el("span", {class: half === "S" ? "half star" : "half"},
      shown(half))));
}

/** A row of tiles shown face up (a revealed hand), named as a list for screen readers. */
export function tileRow(tiles, label) {
  return el("ul", {class: "tiles shown", "aria-label": label},
    ...tiles.map((tile) => el("li", {class: "tile", "aria-label": `tile ${tileName(tile)}`},
      tileFace(tile))));
}
