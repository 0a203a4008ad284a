// The page's only way to the service: the public /v1 API, as any third-party client uses it.

/** A refused request: the problem document (RFC 9457) the service answered with. */
export class Problem extends Error {
  constructor(status, body) {
    super(body && body.detail ? body.detail : `the service answered ${status}`);
    this.status = status;
    this.body = body || {};
  }

  /** What to show a person: the problem's title and its detail. */
  get text() {
    const {title, detail} = this.body;
    return [title, detail].filter(Boolean).join(": ") || this.message;
  }
}

/** Send one request to /v1; return the JSON answer, or throw a Problem. */
export async function call(method, path, {token, body, ifMatch} = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (ifMatch !== undefined) headers["If-Match"] = `"${ifMatch}"`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(`/v1${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const parsed = answer.status === 204 ? null : await answer.json().catch(() => null);
  if (!answer.ok) throw new Problem(answer.status, parsed);
  return parsed;
}

/** The path of a game's resource. */
export function gamePath(gameId, rest = "") {
  return `/games/${encodeURIComponent(gameId)}${rest}`;
}

/** Open the game's stream after event `after`, as the seat of `token` (through a stream
 * ticket: an EventSource sends no Authorization header), or as a spectator without one. */
export async function openStream(gameId, token, after) {
  const query = new URLSearchParams({after: String(after)});
  if (token) {
    const {ticket} = await call("POST", gamePath(gameId, "/stream-tickets"), {token});
    query.set("ticket", ticket);
  }
  return new EventSource(`/v1${gamePath(gameId, "/stream")}?${query}`);
}
