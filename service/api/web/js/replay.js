// The replay viewer of a finished game: every version, with every hand shown (the log is
// public once the match has ended), and its export checked in the browser.
import {call, gamePath, Problem} from "./api.js";
import {byId, put} from "./dom.js";
import {drawLayout} from "./layout.js";
import {buildBoard, describe, newEndsOf, showHandEnd, showMatchEnd, showPlayers, showStats} from "./table.js";
import {verifyExport} from "./verify.js";

const gameId = decodeURIComponent(location.pathname.split("/").pop());
const viewer = {events: [], players: [], states: new Map(), at: 1, asked: 0};

async function start() {
  buildBoard(byId("board"));
  put(byId("game-id"), gameId);
  try {
    viewer.events = (await call("GET", gamePath(gameId, "/export"))).events;
  } catch (error) {
    put(byId("problem"), error instanceof Problem && error.status === 409
      ? "This match has not ended yet: its log, and so its replay, opens once it has."
      : `The replay cannot be shown: ${error instanceof Problem ? error.text : error}`);
    return;
  }
  viewer.players = viewer.events[0].data.players.map((p, seat) => ({...p, seat}));
  if (viewer.events[0].data.rules.variant === "all_fives") byId("rules-link").href = "/rules/all-fives";
  const slider = byId("slider");
  slider.max = String(viewer.events.length);
  put(byId("count"), String(viewer.events.length));
  byId("first").addEventListener("click", () => go(1));
  byId("back").addEventListener("click", () => go(viewer.at - 1));
  byId("forward").addEventListener("click", () => go(viewer.at + 1));
  byId("last").addEventListener("click", () => go(viewer.events.length));
  slider.addEventListener("input", () => go(Number(slider.value)));
  byId("verify").addEventListener("click", verify);
  byId("viewer").hidden = false;
  await go(1);
}

/** Show version `version` (after event `version`): its state as /state?version= rebuilds it,
 * and every seat's tiles as the complete log says. */
async function go(version) {
  const at = Math.min(Math.max(version, 1), viewer.events.length);
  viewer.at = at;
  const asked = ++viewer.asked;
  byId("slider").value = String(at);
  put(byId("at"), String(at));
  const state = await stateAt(at);
  if (asked !== viewer.asked) return;  // a later step was asked for meanwhile
  const event = viewer.events[at - 1];
  put(byId("event"), `Event ${at}: ${describe(event, viewer.players)}`);
  put(byId("turn"), state.status === "finished" ? "The match is over"
    : state.turn === null ? "" : `Turn: ${viewer.players[state.turn].name}`);
  const newEnds = newEndsOf(viewer.events, state.hand_number, at);
  showStats(state, newEnds);
  showPlayers(state, null, handsAt(at));
  drawLayout(byId("layout"), state.layout, newEnds, {owed: state.obligations});
  put(byId("layout-caption"), state.obligations.length ? `Owed ends (R17), marked "!": ${state.obligations.join(", ")}` : "");
  showEnds(at);
  byId("first").disabled = byId("back").disabled = at === 1;
  byId("forward").disabled = byId("last").disabled = at === viewer.events.length;
}

async function stateAt(version) {
  if (!viewer.states.has(version)) {
    viewer.states.set(version, await call("GET", gamePath(gameId, `/state?version=${version}`)));
  }
  return viewer.states.get(version);
}

/** Every seat's tiles after event `version`: dealt, drawn, played (from the full log). */
function handsAt(version) {
  let hands = viewer.players.map(() => []);
  for (const e of viewer.events.slice(0, version)) {
    if (e.type === "hand_started") hands = e.data.hands.map((h) => [...h]);
    else if (e.type === "tile_drawn") hands[e.seat].push(e.data.tile);
    else if (e.type === "tile_played") hands[e.seat].splice(hands[e.seat].indexOf(e.data.tile), 1);
    else if (e.type === "hand_ended") hands = e.data.hands.map((h) => [...h]);
  }
  return hands;
}

/** The panel of the last hand that ended, until the next hand's first play; the match's. */
function showEnds(version) {
  const seen = viewer.events.slice(0, version);
  const handEnd = seen.findLast((e) => e.type === "hand_ended");
  const played = seen.findLast((e) => e.type === "tile_played");
  if (handEnd && (!played || handEnd.seq > played.seq)) showHandEnd(byId("hand-end"), handEnd, viewer.players);
  else byId("hand-end").hidden = true;
  const ended = seen.find((e) => e.type === "game_ended");
  if (ended) showMatchEnd(byId("match-end"), ended, viewer.players);
  else byId("match-end").hidden = true;
}

async function verify() {
  const result = await verifyExport(viewer.events);
  put(byId("verify-result"), result.holds
    ? `✔ The chain holds: ${result.checked} events checked, every deck matches its commitment (${result.reason}).`
    : `✘ The chain does not hold: ${result.reason}.`);
}

start();
