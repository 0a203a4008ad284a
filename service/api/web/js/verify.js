// Checking an export in the browser with Web Crypto (API.md "Events", "Fair shuffles"):
// hash = SHA-256(previous hash in hex + canonical JSON of the event without `hash`), 64
// zeros before the first; each hand's commitment = SHA-256("<salt>:<deck joined by ,>").
const GENESIS = "0".repeat(64);

/** The canonical JSON of service/game/events.py (orjson, OPT_SORT_KEYS): keys sorted, no
 * spaces, UTF-8 text as it is (no \u escapes but for control characters, as JSON.stringify
 * writes them), integers as they are. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Check an export's events: the numbering, the hash chain, every deck's commitment.
 * Return {holds, checked, reason, seq} (seq: the first event that does not check out). */
export async function verifyExport(events) {
  if (!globalThis.crypto || !crypto.subtle) {
    return {holds: false, checked: 0, reason: "this browser offers no Web Crypto here (it needs https or localhost)"};
  }
  let previous = GENESIS;
  for (const [i, event] of events.entries()) {
    const {hash, ...body} = event;
    if (event.seq !== i + 1) return broken(i, event, "its number is out of order");
    if (hash !== await sha256(previous + canonical(body))) {
      return broken(i, event, "its hash does not follow from the events before it");
    }
    if (event.type === "hand_started" && event.data.commitment !== undefined
        && event.data.commitment !== await sha256(`${event.data.salt}:${event.data.deck.join(",")}`)) {
      return broken(i, event, "its deck and salt do not match its commitment");
    }
    previous = hash;
  }
  return {holds: true, checked: events.length, reason: `last hash ${previous.slice(0, 16)}…`};
}

function broken(i, event, reason) {
  return {holds: false, checked: i, seq: event.seq, reason: `event ${event.seq}: ${reason}`};
}
