"""Reading requests: JSON bodies through schemas, bearer tokens and conditional headers."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from flask import request
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import ClientDisconnected, HTTPException, RequestEntityTooLarge
from werkzeug.http import parse_options_header

from service.api import problems
from service.api.errors import field_errors
from service.usecases.cache import Lru
from service.usecases.idempotency import body_hash

MAX_IDEMPOTENCY_KEY = 255
MAX_SEQ = 2**63 - 1
"""The largest version or event number a request can name: no log gets that long. A larger
number means the same (beyond the log), and could not be used as is: the store's ids (Redis
stream ids) end at 2**64 - 1, and int() refuses more than 4300 digits."""
_ENTITY_TAG = r'(W/)?"([\x21\x23-\x7e\x80-\xff]*)"'
ENTITY_TAG = re.compile(_ENTITY_TAG)
"""An entity tag (RFC 9110 8.8.3): `"12"`, or the weak `W/"12"`."""
ENTITY_TAGS = re.compile(rf"[ \t,]*{_ENTITY_TAG}(?:[ \t]*,[ \t,]*{_ENTITY_TAG})*[ \t,]*")
"""A comma-separated list of entity tags, empty elements allowed (RFC 9110 5.6.1)."""
JSON_CHARSETS = frozenset({"utf-8", "utf8"})
"""The charsets a JSON body may name (JSON between systems is UTF-8, RFC 8259 8.1)."""
TRUE, FALSE = frozenset({"true", "1"}), frozenset({"false", "0"})
"""How a boolean query argument is spelt."""
MEMO_BODY_BYTES = 256
"""Bodies up to this size may be remembered once loaded (see `load_body`)."""
_loaded: Lru[dict[str, Any]] = Lru(4096)


def is_number(text: str) -> bool:
    """Return whether `text` is a plain decimal number (ASCII digits only)."""
    return text.isascii() and text.isdigit()


def number(text: str) -> int:
    """Return plain decimal `text` (see is_number) as an int, capped at MAX_SEQ."""
    digits = text.lstrip("0")
    return MAX_SEQ if len(digits) > len(str(MAX_SEQ)) else min(int(digits or "0"), MAX_SEQ)


def gather(*reads: Callable[[], Any]) -> list[Any]:
    """Return what each of `reads` (of headers or query parameters) reads, or one 400 that
    names every bad field of them all, not only the first's."""
    results, refusals = [], []
    for read in reads:
        try:
            results.append(read())
        except problems.BadRequest as refused:
            refusals.append(refused)
    if len(refusals) == 1:
        raise refusals[0]
    if refusals:
        raise problems.BadRequest("some fields are invalid", errors=[
            error for refused in refusals for error in refused.extra["errors"]])
    return results


def load_body(schema: Schema) -> dict[str, Any]:
    """Parse the JSON body through `schema`, or raise 400 naming each bad field.

    A small body whose loaded fields are all plain values (a move) is remembered, so that
    the same body again skips the schema; each caller gets its own copy.
    """
    require_json()
    raw = raw_body() or b"null"
    key = f"{type(schema).__name__}:{raw!r}" if len(raw) <= MEMO_BODY_BYTES else None
    known = _loaded.get(key) if key else None
    if known is not None:
        return dict(known)
    loaded = _load(schema, raw)
    if key and all(value is None or isinstance(value, str | int) for value in loaded.values()):
        _loaded.put(key, dict(loaded))
    return loaded


def require_json() -> None:
    """415 for a body not sent as JSON: its Content-Type must be `application/json` or an
    `application/...+json` type, naming no charset but UTF-8; a body with no Content-Type is
    refused too. A browser sends `text/plain`, form and untyped bodies cross-site with no
    preflight, so taking them as JSON would let any page act for its visitor. No body and no
    Content-Type is no body at all (and fails the schema as such)."""
    sent = request.headers.get("Content-Type")
    if sent is None and not _has_body():
        return
    mimetype, options = parse_options_header(sent or "")
    mimetype = mimetype.lower()
    if (mimetype == "application/json" or mimetype.startswith("application/")
            and mimetype.endswith("+json")) \
            and options.get("charset", "utf-8").lower() in JSON_CHARSETS:
        return
    raise problems.NotJson("send the body as JSON: Content-Type: application/json")


def _has_body() -> bool:
    """Whether the request says a body follows (a Content-Length over 0, or chunks)."""
    return bool(request.content_length) or "HTTP_TRANSFER_ENCODING" in request.environ


def raw_body() -> bytes:
    """Return the body's bytes: 413 past MAX_CONTENT_LENGTH, a chunked body too (which
    werkzeug would cut there), 400 if the server cannot read it (a bad chunk size) or it
    ends short of its Content-Length, 408 if it does not arrive in time (the server's read
    deadline), and 501 for a transfer coding besides chunked (gzip, deflate), which nothing
    here decodes."""
    coding = request.environ.get("HTTP_TRANSFER_ENCODING")
    if coding is not None and [c.strip(" \t").lower() for c in coding.split(",")] != ["chunked"]:
        raise problems.UnknownCoding(f"the transfer coding {coding!r} is not supported; "
                                     "send the body as is or chunked")
    try:
        raw = request.get_data(cache=True)
    except ClientDisconnected:
        raise _cut_short() from None
    except (HTTPException, problems.BodyTimeout):
        raise  # 413 for a Content-Length over the limit; 408 past the read deadline
    except Exception as error:  # the server's own framing errors, e.g. gunicorn's chunks
        raise problems.BadRequest(
            "the body could not be read", errors=[{"field": "body", "message": "unreadable"}]
        ) from error
    if request.content_length is not None and len(raw) < request.content_length:
        raise _cut_short()  # gunicorn's body just ends where the client stopped sending
    limit = request.max_content_length
    if limit is not None and len(raw) >= limit and request.content_length is None \
            and request.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return raw


def _cut_short() -> problems.BadRequest:
    return problems.BadRequest("the body ended before its Content-Length",
                               errors=[{"field": "body", "message": "cut short"}])


def _load(schema: Schema, raw: bytes) -> dict[str, Any]:
    try:  # JSON between systems is UTF-8 (RFC 8259 8.1), which may start with a BOM
        body = json.loads(raw.decode("utf-8-sig"), parse_int=_json_int,
                          parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except DuplicateKey as twice:
        raise problems.BadRequest("a JSON object in the body names a key twice",
                                  errors=[{"field": twice.key, "message": "duplicate key"}]) \
            from None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise problems.BadRequest("the body is not JSON",
                                  errors=[{"field": "body", "message": "not JSON"}]) from None
    if not isinstance(body, dict):
        raise problems.BadRequest("the body must be a JSON object",
                                  errors=[{"field": "body", "message": "not an object"}])
    try:
        loaded: dict[str, Any] = schema.load(body)
    except ValidationError as error:
        errors = field_errors(error.messages)
        detail = f"{errors[0]['field']}: {errors[0]['message']}" if len(errors) == 1 \
            else "some fields are invalid"  # one bad field: the detail says what is wrong
        raise problems.BadRequest(detail, errors=errors) from None
    return loaded


class DuplicateKey(ValueError):
    """A JSON object names a key twice: which value counts would be anyone's guess (RFC 8259
    4 leaves it open), so a body two readers could take two ways is refused."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build a JSON object from its members, or raise DuplicateKey if a key comes twice."""
    members = dict(pairs)
    if len(members) < len(pairs):
        raise DuplicateKey(next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1))
    return members


def _no_constant(name: str) -> None:
    """Refuse `NaN`, `Infinity` and `-Infinity`, which Python reads but JSON has not."""
    raise ValueError(f"{name} is not JSON")


def _json_int(text: str) -> int | str:
    """Read a JSON integer; one longer than Python reads (4300 digits) stays text, which no
    integer field takes, so the 400 names its field instead of calling the body not JSON."""
    limit = sys.get_int_max_str_digits()  # 0: no limit
    return int(text) if not limit or len(text.lstrip("-")) <= limit else text


def body_digest() -> str:
    """Return the hash an Idempotency-Key record keeps of the body sent: of its JSON value (key
    order and spacing do not count), or of its bytes when that cannot be read as JSON."""
    raw = raw_body()
    try:
        return body_hash(json.loads(raw, object_pairs_hook=_unique_keys))
    except (ValueError, TypeError, RecursionError):  # not JSON, a key twice, beyond canonical
        return hashlib.sha256(raw).hexdigest()


def bearer_token() -> str | None:
    """Return the bearer token sent, None if no Authorization header; 401 if malformed."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise problems.Unauthorized("use Authorization: Bearer <seat token>")
    return token.strip()


def if_match() -> frozenset[int] | None:
    """Return the versions If-Match names, None if absent or `*`; 400 if it is no list of
    entity tags. A state's ETag is `"<version>"`, and If-Match compares strongly (RFC 9110
    13.1.1): a weak tag, or a tag that is no version as an ETag spells it, names none."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    if ENTITY_TAGS.fullmatch(raw) is None:
        raise problems.BadRequest("If-Match must be * or entity tags, e.g. \"12\"", errors=[
            {"field": "If-Match", "message": "not a list of entity tags"}])
    return frozenset(int(tag) for weak, tag in ENTITY_TAG.findall(raw)
                     if not weak and is_number(tag) and tag == str(number(tag)))


def none_match(etag: str) -> bool:
    """Whether If-None-Match is `*` or names `etag` (a strong tag, `"12"`), compared weakly as
    RFC 9110 13.1.2 says (`W/"12"` names it too). A value that is no list of entity tags is
    ignored: the answer is then the full one, which is never wrong for a GET."""
    raw = request.headers.get("If-None-Match")
    if raw is None:
        return False
    if raw.strip() == "*":
        return True
    return ENTITY_TAGS.fullmatch(raw) is not None \
        and any(f'"{tag}"' == etag for _, tag in ENTITY_TAG.findall(raw))


def idempotency_key() -> str | None:
    """Return the Idempotency-Key header, or 400 if it is empty or too long."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
        raise problems.BadRequest("Idempotency-Key must be 1-255 characters",
                                  errors=[{"field": "Idempotency-Key", "message": "bad length"}])
    return key


def int_arg(name: str, minimum: int, required: bool = False) -> int | None:
    """Return query argument `name` as an integer >= minimum (None if absent), or 400 whose
    detail and field message both say the range."""
    raw = request.args.get(name)
    if raw is None and not required:
        return None
    wanted = f"an integer >= {minimum}"
    if raw is None:
        raise problems.BadRequest(f"give ?{name}=N, {wanted}",
                                  errors=[{"field": name, "message": f"required: {wanted}"}])
    if not is_number(raw) or number(raw) < minimum:
        raise problems.BadRequest(f"{name} must be {wanted}",
                                  errors=[{"field": name, "message": f"must be {wanted}"}])
    return number(raw)


def bool_arg(name: str) -> bool:
    """Return query argument `name` as a boolean (absent: false), or 400 that says how."""
    raw = request.args.get(name)
    if raw is None or raw in FALSE:
        return False
    if raw in TRUE:
        return True
    wanted = "true or false"
    raise problems.BadRequest(f"{name} must be {wanted}",
                              errors=[{"field": name, "message": f"must be {wanted}"}])
