// The game page: a new game against the AI, then its table, followed live over /stream.
// The seat's token is kept in this tab's session storage, for that game only, so a reload
// resumes where it was; the stream resumes after the last event this page has.
import {call, gamePath, openStream, Problem} from "./api.js";
import {byId, el, put, sleep} from "./dom.js";
import {drawLayout} from "./layout.js";
import {buildBoard, describe, newEndsOf, seatName, showHandEnd, showMatchEnd, showPlayers, showStats}
  from "./table.js";
import {tileFace, tileName} from "./tiles.js";

const params = new URLSearchParams(location.search);
const PACE_MS = Number.parseInt(params.get("pace") ?? "700", 10) || 0;  // between moves shown
const EVENT_TYPES = ["game_created", "hand_started", "tile_drawn", "tile_played", "passed",
  "obligation_lifted", "hand_ended", "game_ended", "turn_timed_out", "seat_left", "leader_drawn"];
const seatKey = (gameId) => `spinner.seat.${gameId}`;

const game = {
  id: null, token: null, seat: null, players: [], events: [], state: null,
  received: 0, shown: 0, latest: 0, queue: [], draining: false, posting: false,
  stream: null, chosen: null, troubled: false, wantsFocus: false,
};
const RETRY_MS = 2000;  // before a failed read, or a closed stream, is tried again

/** Start the page: the game named in the URL if this tab holds its seat, else the form. */
function start() {
  buildBoard(byId("board"));
  byId("new-game").addEventListener("submit", (e) => { e.preventDefault(); create(e.target); });
  byId("draw").addEventListener("click", () => submit({action: "draw"}));
  byId("pass").addEventListener("click", () => submit({action: "pass"}));
  const gameId = params.get("game");
  const held = gameId && JSON.parse(sessionStorage.getItem(seatKey(gameId)) || "null");
  if (held) {
    resume(gameId, held).catch((error) => troubled(`${unreachable(error)}; reload to try again`));
  } else if (gameId) {
    put(byId("setup-problem"), `This tab holds no seat of game ${gameId}. `,
      el("a", {href: `/replay/${encodeURIComponent(gameId)}`}, "Its replay"),
      " opens once it has ended.");
  }
}

/** Create a game from the form: you, then the AI seats; keep your token for this tab. */
async function create(form) {
  const data = new FormData(form);
  const opponents = Number(data.get("opponents")), level = data.get("level");
  const players = [{name: data.get("name").trim() || "You", kind: "human"}];
  for (let i = 1; i <= opponents; i++) players.push({name: `AI ${i}`, kind: "ai", level});
  const rules = data.get("variant") === "all_fives"
    ? {variant: "all_fives", target: Number(data.get("target"))}
    : {hands: Number(data.get("hands")), opening: data.get("opening")};
  try {
    const created = await call("POST", "/games", {body: {players, rules}});
    const mine = created.seats.find((s) => s.kind === "human");
    const held = {token: mine.token, seat: mine.seat};
    sessionStorage.setItem(seatKey(created.game_id), JSON.stringify(held));
    params.set("game", created.game_id);
    history.pushState(null, "", `/?${params}`);
    await resume(created.game_id, held);
  } catch (error) {
    put(byId("setup-problem"), refusal(error));
  }
}

/** What to tell a player whose new game was not made: the service's problem, in a player's
 * words for the cap on open games against the AI (the service's own names API keys). */
function refusal(error) {
  if (!(error instanceof Problem)) return `${unreachable(error)}; try again`;
  if (error.body.type === "/problems/too-many-ai-games") {
    return "You have as many games against the AI under way as one player may. Finish one "
      + "of them, or start again later: a game with no move for an hour no longer counts.";
  }
  return error.text;
}

/** Show the game as it stands (its log so far, then its state), then follow it live. */
async function resume(gameId, {token, seat}) {
  Object.assign(game, {id: gameId, token, seat});
  byId("setup").hidden = true;
  byId("table").hidden = false;
  const {events} = await call("GET", gamePath(gameId, "/events"), {token});
  record(events);
  events.forEach((e) => note(e, false));
  const fives = events[0].data.rules.variant === "all_fives";
  byId("rules-spinner").hidden = fives;
  byId("rules-all-fives").hidden = !fives;
  const ended = events.findLast((e) => e.type === "hand_ended");  // shown until the next ends
  if (ended) showHandEnd(byId("hand-end"), ended, game.players, game.seat);
  await showLatest();
  await listen();
}

/** Keep events this page had not had: their order, who sits where, the ends they open. */
function record(events) {
  for (const e of events) {
    if (e.seq <= game.received) continue;
    game.events.push(e);
    game.received = e.seq;
    game.latest = Math.max(game.latest, e.seq);
    if (e.type === "game_created") game.players = e.data.players.map((p, seat) => ({...p, seat}));
  }
}

/** Follow the stream from the last event held; a closed stream (its ticket expired) is
 * opened again with a new ticket, until the match has ended. */
async function listen() {
  if (game.stream) game.stream.close();
  const stream = await openStream(game.id, game.token, game.received);
  game.stream = stream;
  for (const type of EVENT_TYPES) {
    stream.addEventListener(type, (m) => arrived(JSON.parse(m.data)));
  }
  stream.addEventListener("turn", (m) => {
    game.latest = Math.max(game.latest, JSON.parse(m.data).version);
    drain();
  });
  stream.onopen = () => settled();
  stream.onerror = () => {
    if (game.stream !== stream || finished()) return;
    if (stream.readyState === EventSource.CLOSED) {
      setTimeout(reconnect, RETRY_MS);
      return;
    }
    setTimeout(() => {  // the browser reconnects on its own: say so only if it takes a while
      if (game.stream === stream && stream.readyState !== EventSource.OPEN && !finished()) {
        troubled("The connection to the service was lost; reconnecting…");
      }
    }, RETRY_MS);
  };
}

/** Open the stream again (with a new ticket), and again while the service is unreachable. */
function reconnect() {
  listen().catch((error) => {
    troubled(`${unreachable(error)}; trying again…`);
    setTimeout(reconnect, RETRY_MS);
  });
}

function arrived(event) {
  if (event.seq <= game.received) return;
  game.latest = Math.max(game.latest, event.seq);
  if (event.seq === game.received + 1) {
    record([event]);
    game.queue.push(event);
  }
  drain();  // a gap (an event type this page does not listen for) is read from /events
}

/** Show what came, one move at a time with a pause between, each at its own version. */
async function drain() {
  if (game.draining || game.posting) return;
  game.draining = true;
  try {
    for (;;) {
      if (game.latest > game.received) await readMissing();
      const event = game.queue.shift();
      if (!event) break;
      if (event.seq > game.shown && event.seat !== null && PACE_MS) await sleep(PACE_MS);
      note(event, true);
      const next = game.queue[0];
      if (event.seq > game.shown && (!next || next.seat !== null)) await showVersion(event.seq);
    }
    if (game.latest > game.shown) await showLatest();
  } catch (error) {  // a read that failed: the page would stay on an old state
    troubled(`${unreachable(error)}; trying again…`);
    setTimeout(drain, RETRY_MS);
  } finally {
    game.draining = false;
  }
}

async function readMissing() {
  const {events} = await call("GET", gamePath(game.id, `/events?after=${game.received}`),
    {token: game.token});
  const fresh = events.filter((e) => e.seq > game.received);
  record(fresh);
  game.queue.push(...fresh);
}

/** Add an event to the moves list; a hand's or the match's end shows its panel. */
function note(event, live) {
  const list = byId("moves");
  if (event.type === "hand_started") list.replaceChildren();
  list.append(el("li", {}, describe(event, game.players, game.seat)));
  list.scrollTop = list.scrollHeight;
  if (event.type === "hand_ended" && live) showHandEnd(byId("hand-end"), event, game.players, game.seat);
  if (event.type === "game_ended") {
    const replay = el("p", {}, el("a", {href: `/replay/${encodeURIComponent(game.id)}`},
      "Replay this game, step by step"));
    showMatchEnd(byId("match-end"), event, game.players, game.seat, replay);
  }
}

async function showVersion(version) {
  render(await call("GET", gamePath(game.id, `/state?version=${version}`), {token: game.token}));
}

async function showLatest() {
  render(await call("GET", gamePath(game.id), {token: game.token}));
}

function finished() {
  return game.state !== null && game.state.status === "finished";
}

/** Draw a state of the game (never one older than the one shown). */
function render(state) {
  if (state.version < game.shown) return;
  settled();
  const focused = document.activeElement;
  if (focused && focused !== document.body) game.wantsFocus = byId("table").contains(focused);
  game.state = state;
  game.shown = state.version;
  game.latest = Math.max(game.latest, state.version);  // its events, if the stream has not
  // brought them yet, are read from /events (a match-ending move closes the stream at once)
  game.chosen = null;
  showStats(state, newEndsOf(game.events, state.hand_number, state.version));
  showPlayers(state, game.seat);
  const mine = state.status === "playing" && state.turn === game.seat;
  put(byId("turn"), finished() ? "The match is over"
    : `Current Turn: ${mine ? "Your Turn" : seatName(state.players, state.turn)}`);
  drawTable();
  showHand(state);
  const can = (action) => state.legal_moves.some((m) => m.action === action);
  byId("draw").disabled = !can("draw");
  byId("pass").disabled = !can("pass");
  if (finished() && game.stream) game.stream.close();
  if (game.wantsFocus && mine) focusFirst();  // kept while the buttons are drawn again
}

function drawTable(targets = []) {
  const state = game.state;
  drawLayout(byId("layout"), state.layout, newEndsOf(game.events, state.hand_number, state.version),
    {owed: state.obligations, targets, onEnd: chooseEnd});
  put(byId("layout-caption"), state.obligations.length
    ? `Owed ends (R17), marked "!" with a dashed ring: ${state.obligations.join(", ")}` : "No end is owed");
}

/** Your tiles: those with a legal play are buttons; the others are dimmed and disabled. */
function showHand(state) {
  const playable = new Set(state.legal_moves.filter((m) => m.action === "play").map((m) => m.tile));
  const buttons = state.hand.map((tile) => el("button", {
    type: "button", class: `tile${playable.has(tile) ? "" : " dim"}`, "data-tile": tile,
    disabled: !playable.has(tile), "aria-pressed": "false",
    "aria-label": `tile ${tileName(tile)}${playable.has(tile) ? "" : ", cannot be played now"}`,
    onclick: () => chooseTile(tile)}, tileFace(tile)));
  put(byId("hand"), ...buttons);
  put(byId("choice"));
}

function movesOf(tile) {
  return game.state.legal_moves.filter((m) => m.action === "play" && m.tile === tile);
}

/** A tile chosen: show the ends it can go on, in the picture and as buttons. */
function chooseTile(tile) {
  game.chosen = tile;
  for (const b of byId("hand").children) b.setAttribute("aria-pressed", String(b.dataset.tile === tile));
  const ends = [...new Set(movesOf(tile).map((m) => m.end))];
  drawTable(ends.filter((end) => end !== null));
  const owed = game.state.obligations;
  put(byId("choice"), el("p", {}, `Play ${tile} on:`),
    el("div", {class: "options"}, ...ends.map((end) => el("button", {
      type: "button", "data-end": end ?? "centre", onclick: () => chooseEnd(end)},
    end === null ? "the centre (the lead)" : endLabel(end, owed.includes(end))))));
  byId("choice").querySelector("button").focus();
}

function endLabel(end, owed) {
  const value = game.state.layout.ends.find((e) => e.id === end).value;
  return `end ${end} (${value})${owed ? ", owed" : ""}`;
}

/** An end chosen: play there, asking which value a spinner half leaves only when more than
 * one is legal (R14). */
function chooseEnd(end) {
  const moves = movesOf(game.chosen).filter((m) => m.end === end);
  if (moves.length === 1) {
    submit(moves[0]);
    return;
  }
  put(byId("choice"), el("p", {}, `Which number should ${game.chosen} leave on ${end}? (R14)`),
    el("div", {class: "options"}, ...moves.map((m) => el("button", {
      type: "button", "data-expose": m.expose, onclick: () => submit(m)}, `leave ${m.expose}`))));
  byId("choice").querySelector("button").focus();
}

/** Send a move at the version shown (If-Match): a refusal shows the service's explanation. */
async function submit(move) {
  game.posting = true;
  put(byId("problem"));
  try {
    render(await call("POST", gamePath(game.id, "/moves"),
      {token: game.token, body: move, ifMatch: game.shown}));
  } catch (error) {
    if (error instanceof Problem) {
      put(byId("problem"), `Refused: ${error.text}`);
    } else {
      troubled(`Your move was not sent: ${unreachable(error)}`);
    }
    if (game.state) drawTable();
  } finally {
    game.posting = false;
    drain();
  }
}

/** What to say of a request that failed: the service's problem, or that it is unreachable. */
function unreachable(error) {
  return error instanceof Problem ? `The service answered: ${error.text}`
    : "The service cannot be reached";
}

/** Say that the page has lost touch with the service (until `settled`). */
function troubled(text) {
  game.troubled = true;
  put(byId("problem"), text);
}

/** Clear what `troubled` said, once the service answers again. */
function settled() {
  if (!game.troubled) return;
  game.troubled = false;
  put(byId("problem"));
}

function focusFirst() {
  const first = byId("table").querySelector(".tiles button:not([disabled]), .actions button:not([disabled])");
  if (first) first.focus();
}

addEventListener("keydown", (e) => {  // Escape: choose another tile
  if (e.key !== "Escape" || !game.chosen || !game.state) return;
  game.chosen = null;
  showHand(game.state);
  drawTable();
  focusFirst();
});

addEventListener("popstate", () => location.reload());
start();
