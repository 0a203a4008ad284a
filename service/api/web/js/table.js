// What the game page and the replay viewer both show: the stats, the seats, each event as a
// sentence, and the end of a hand or of the match.
import {byId, el, put} from "./dom.js";
import {tileRow} from "./tiles.js";

/** The name of `seat` among `players`, "you" for `me`. */
export function seatName(players, seat, me = null) {
  if (seat === me) return "You";
  const player = players[seat];
  return player ? player.name : `seat ${seat}`;
}

/** Build the board both pages show into `box`: the stats, the seats, the layout's figure. */
export function buildBoard(box) {
  const stat = (name, id) => el("div", {}, el("dt", {}, name), el("dd", {id}));
  put(box,
    el("dl", {class: "stats"}, stat("Hand", "hand-number"), stat("Opening double", "opening-double"),
      stat("Count", "count-now"), stat("Boneyard", "boneyard"), stat("Version", "version")),
    el("div", {id: "players", class: "players"}),
    el("figure", {class: "layout"}, el("div", {id: "layout"}), el("figcaption", {id: "layout-caption"})));
}

/** Fill the stats (hand number, opening double, All Fives' count, boneyard, version) from a
 * state; `newEnds` are the ends each play of its hand opened (`newEndsOf`). */
export function showStats(state, newEnds = []) {
  const fives = state.rules.variant === "all_fives";
  put(byId("hand-number"), state.hand_number === null ? "–"
    : fives ? `${state.hand_number}, first to ${state.rules.target} wins`
      : `${state.hand_number} of ${state.rules.hands}`);
  put(byId("opening-double"), state.opening_double || "–");
  byId("count-now").parentElement.hidden = !fives;
  put(byId("count-now"), fives ? String(countOf(state.layout, newEnds)) : "");
  put(byId("boneyard"), `${state.boneyard_count} tiles`);
  put(byId("version"), String(state.version));
}

/** List every seat: name, kind, tile count and total; whose turn it is said in words. */
export function showPlayers(state, me = null, hands = null) {
  const cards = state.players.map((p) => {
    const playing = state.turn === p.seat;
    const who = p.seat === me ? `${p.name} (you)` : p.name;
    return el("section", {class: `seat${playing ? " playing" : ""}`, "aria-label": `seat ${p.seat}: ${who}`},
      el("h4", {}, playing ? `▶ ${who}` : who),
      el("p", {class: "kind"}, p.kind === "ai" ? `AI, ${p.level}` : "human",
        playing ? el("strong", {}, " · to play") : null),
      el("dl", {},
        el("div", {}, el("dt", {}, "Tiles"), el("dd", {}, p.tile_count)),
        el("div", {}, el("dt", {}, "Total"), el("dd", {}, p.total))),
      hands && hands[p.seat] ? tileRow(hands[p.seat], `${p.name}'s tiles`) : null);
  });
  put(byId("players"), ...cards);
}

/** One event as a sentence (an unknown type is named as it is). */
export function describe(event, players, me = null) {
  const who = event.seat === null ? "" : seatName(players, event.seat, me);
  const d = event.data || {};
  switch (event.type) {
    case "game_created": return "The game was created";
    case "leader_drawn":
      return `Drawn for the lead (F4): ${(d.tiles || []).map((t, s) => `${seatName(players, s, me)} ${t}`).join(", ")}`;
    case "hand_started":
      return d.opening_double ? `Hand ${d.hand_number} dealt, opening with ${d.opening_double}`
        : `Hand ${d.hand_number} dealt, ${seatName(players, d.leader, me)} to lead`;
    case "tile_drawn":
      return `${who} drew ${d.tile || "a tile"}${d.reason === "search" ? " searching for the opener (R9)" : ""}`;
    case "tile_played":
      return `${who} played ${d.tile} ${d.end === null ? "in the centre" : `on ${d.end}`}`
        + (d.expose === null ? "" : `, leaving ${d.expose}`)
        + (d.points === undefined ? "" : d.points ? `, scoring ${d.points}` : ", no score");
    case "passed": return `${who} passed`;
    case "obligation_lifted": return `Everyone passed: ${(d.ends || []).join(", ")} no longer owed (R18)`;
    case "hand_ended":
      return `Hand ${d.hand_number} ended (${d.ended_by}): `
        + (d.winner === null ? "nobody won it" : `${seatName(players, d.winner, me)} won it`);
    case "game_ended":
      return `The match ended: ${(d.winners || []).map((s) => seatName(players, s, me)).join(" and ")} won`;
    default: return `${event.type}${who ? ` (${who})` : ""}`;
  }
}

/** Show a hand's end: every seat's tiles and points (R21), and its winner (R22). */
export function showHandEnd(box, event, players, me = null) {
  const d = event.data;
  const rows = players.map((p) => el("tr", {},
    el("th", {scope: "row"}, seatName(players, p.seat, me), p.seat === d.winner ? " (won the hand)" : ""),
    el("td", {}, tileRow(d.hands[p.seat] || [], `${p.name}'s tiles left`)),
    el("td", {}, d.points[p.seat])));
  put(box, el("h3", {}, `Hand ${d.hand_number} is over (${d.ended_by})`),
    el("table", {}, el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "Seat"),
      el("th", {scope: "col"}, "Tiles left"), el("th", {scope: "col"}, "Points"))),
    el("tbody", {}, ...rows)));
  box.hidden = false;
}

/** Show the match's end: its winners and every total (R23). */
export function showMatchEnd(box, event, players, me = null, extra = null) {
  const {totals, winners} = event.data;
  put(box, el("h3", {}, "The match is over"),
    el("p", {class: "winners"}, "Winner: ",
      el("strong", {}, winners.map((s) => seatName(players, s, me)).join(" and "))),
    el("table", {class: "totals"},
      el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "Seat"), el("th", {scope: "col"}, "Total"))),
      el("tbody", {}, ...players.map((p) => el("tr", {},
        el("th", {scope: "row"}, seatName(players, p.seat, me), winners.includes(p.seat) ? " ★ winner" : ""),
        el("td", {}, totals[p.seat]))))),
    extra);
  box.hidden = false;
}

/** The new ends each play of the state's hand opened, in order, from the events seen. */
export function newEndsOf(events, handNumber, upTo = Infinity) {
  let hand = null;
  const opened = [];
  for (const e of events) {
    if (e.seq > upTo) break;
    if (e.type === "hand_started") { hand = e.data.hand_number; opened.length = 0; }
    else if (e.type === "tile_played" && hand === handNumber) opened.push(e.data.new_ends);
  }
  return opened;
}

/** All Fives' count (F9): what the open ends show. A non-spinner double across its end shows
 * both halves; the spinner's straight-on end played on an end too, and its two long ends
 * once one is covered; both long ends while open show the double once between them; a
 * narrow side shows nothing until a tile lies on it. */
export function countOf(layout, newEnds) {
  const openedBy = new Map();
  let spinner = null;
  layout.tiles.forEach((played, i) => {
    const [a, b] = played.tile.split("-");
    if (a === b && spinner === null) spinner = i;
    (newEnds[i] || []).forEach((id, k) => openedBy.set(id, [i, k]));
  });
  const lead = spinner !== null && layout.tiles[spinner].end === null;
  const longEnds = spinner === null ? [] : (newEnds[spinner] || []).slice(0, lead ? 2 : 1);
  const open = new Set(layout.ends.map((e) => e.id));
  return layout.ends.reduce((count, end) => {
    const [i, k] = openedBy.get(end.id) || [null, 0];
    if (i === null) return count + end.value;
    const [a, b] = layout.tiles[i].tile.split("-");
    if (a !== b) return count + end.value;
    if (i !== spinner) return count + 2 * end.value;  // a double across its end
    if (k >= longEnds.length) return count;  // a narrow side no tile lies on
    const bothOpen = lead && longEnds.every((id) => open.has(id));
    return count + (bothOpen ? end.value : 2 * end.value);
  }, 0);
}
