"""Checks answers against openapi.yaml: `check_response` for one answer, and `ContractClient`,
a Flask test client whose every answer is checked.

    client = ContractClient(app.test_client())
    answer = client.post("/v1/games", json=body)      # AssertionError if it breaks the spec

The checks use openapi-core: the path and method must be in the spec (except the answers the
spec describes in general: 404 for an unknown path, 405 for an unknown method, HEAD and
OPTIONS), the status must be one of the operation's, the content type one of that status's,
the headers and the body must fit their schemas. A Server-Sent Events answer is checked for
status, content type and headers only (its body never ends while the game is playing). A 2xx
answer to a request whose body the spec refuses is a mismatch too: the spec is stricter than
the service. A gzip-compressed answer (the spec's info.description) must answer a request
whose Accept-Encoding names gzip, say `Vary: Accept-Encoding`, have a body (never a 304 or the
event stream) and decompress; its decompressed body is then checked as any other.
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from flask import Response
from flask.testing import FlaskClient
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.deserializing.media_types.util import json_loads, plain_loads
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_core.validation.request.validators import V31RequestBodyValidator
from openapi_core.validation.response.validators import V31ResponseHeadersValidator
from openapi_schema_validator import OAS31Validator
from werkzeug.datastructures import Headers
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
PROBLEM_JSON = "application/problem+json"
EVENT_STREAM = "text/event-stream"
_TEMPLATE_PARAM = re.compile(r"\{(\w+)\}")


class ContractViolation(AssertionError):
    """An answer that does not fit openapi.yaml."""


@functools.cache
def spec_dict() -> dict[str, Any]:
    """Return openapi.yaml as a dict."""
    with SPEC_PATH.open(encoding="utf-8") as file:
        loaded: dict[str, Any] = yaml.safe_load(file)
    return loaded


# openapi-core reads only application/json (and a few others) as JSON by default
_DESERIALIZERS = {PROBLEM_JSON: json_loads, EVENT_STREAM: plain_loads,
                  "application/openmetrics-text": plain_loads}


@functools.cache
def _openapi(kind: str = "full") -> OpenAPI:
    validators: dict[str, Any] = {
        "full": {},
        "headers": {"response_validator_cls": V31ResponseHeadersValidator},
        "request_body": {"request_validator_cls": V31RequestBodyValidator},
    }[kind]
    config = Config(extra_media_type_deserializers=_DESERIALIZERS, **validators)
    return OpenAPI.from_file_path(str(SPEC_PATH), config=config)


def openapi() -> OpenAPI:
    """Return the spec loaded by openapi-core (validated once)."""
    return _openapi("full")


def check_response(method: str, path_template_or_url: str, flask_response: Response,
                   request_body: Any = None, *, headers: Mapping[str, str] | None = None) -> None:
    """Raise ContractViolation unless `flask_response` is what openapi.yaml says
    `method path_template_or_url` answers.

    `path_template_or_url` is a path (`/v1/games/abc/events?after=2`), a full URL, or a
    template from the spec (`/v1/games/{game_id}`). `request_body` (a JSON value, str or
    bytes) is the body that was sent: a 2xx answer to a body the spec refuses is a mismatch.
    """
    request = _request(method, path_template_or_url, request_body, headers)
    _check(request, flask_response, request_body is not None)


def assert_fits_schema(instance: Any, name: str) -> None:
    """Raise ContractViolation unless `instance` fits `#/components/schemas/<name>`."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": spec_dict()["components"]}
    errors = sorted(OAS31Validator(schema).iter_errors(instance), key=str)
    if errors:
        raise ContractViolation(f"not a {name}: "
                                + "; ".join(_describe_schema_error(e) for e in errors))


def stream_frames(text: str) -> list[dict[str, str]]:
    """Return the frames of an event stream's text as an SSE parser (WHATWG) gives them:
    each frame with data as `{event, data, id}`, `id` the last event id so far (left out
    while there is none). The `retry:` frame, comments and an unfinished last frame are
    none."""
    frames, last_id = [], None
    for block in re.split(r"\r\n\r\n|\n\n|\r\r", text)[:-1]:  # [-1]: not ended yet
        event, data = "message", []
        for line in re.split(r"\r\n|\n|\r", block):  # only these end a line (not U+2028)
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "id":
                last_id = value
            elif name == "event":
                event = value
        if data:
            frame = {"event": event, "data": "\n".join(data)}
            frames.append(frame if last_id is None else {**frame, "id": last_id})
    return frames


def assert_fits_stream(text: str) -> list[dict[str, str]]:
    """Raise ContractViolation unless each frame of an event stream's text fits one of
    `StreamFrame`'s schemas and its `data` the JSON schema that one names (`contentSchema`,
    which a JSON Schema validator only annotates); an event frame's `id` and `event` must
    be its event's `seq` and `type`. Return the frames."""
    frames = stream_frames(text)
    for frame in frames:
        assert_fits_schema(frame, "StreamFrame")
        fits = [n for n in _one_of("StreamFrame") if _fits(frame, n)]
        data_schema = spec_dict()["components"]["schemas"][fits[0]]["properties"]["data"]
        payload = json.loads(frame["data"])
        assert_fits_schema(payload, data_schema["contentSchema"]["$ref"].split("/")[-1])
        if "seq" in payload:
            _expect((frame["id"], frame["event"]) == (str(payload["seq"]), payload["type"]),
                    f"the frame of event {payload['seq']} has id {frame['id']!r}")
    return frames


def _one_of(name: str) -> list[str]:
    """The names of the schemas a `oneOf` component lists."""
    return [ref["$ref"].split("/")[-1]
            for ref in spec_dict()["components"]["schemas"][name]["oneOf"]]


def _fits(instance: Any, name: str) -> bool:
    try:
        assert_fits_schema(instance, name)
    except ContractViolation:
        return False
    return True


class ContractClient:
    """Wraps a Flask test client; every answer of `open` (and so of get, post, ...) is
    checked with `check_response` before it is returned. Anything else is the wrapped
    client's (e.g. `with client:`, `client.application`)."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client

    def open(self, *args: Any, **kwargs: Any) -> Any:
        """Send a request as `FlaskClient.open` does, then check the answer."""
        answer = self.client.open(*args, **kwargs)
        # the JSON sent, raw bytes or text sent, or None (no body, or a form, stream or file)
        data = kwargs.get("data")
        body = kwargs["json"] if "json" in kwargs else (
            data if isinstance(data, str | bytes) else None)
        sent = answer.request
        _check(WerkzeugOpenAPIRequest(_rebuild(sent.method, sent.full_path, body, sent.headers)),
               answer, body is not None)
        return answer

    def get(self, *args: Any, **kwargs: Any) -> Any:
        """GET, checked."""
        return self.open(*args, method="GET", **kwargs)

    def post(self, *args: Any, **kwargs: Any) -> Any:
        """POST, checked."""
        return self.open(*args, method="POST", **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> Any:
        """PUT, checked (no path has one: 405)."""
        return self.open(*args, method="PUT", **kwargs)

    def patch(self, *args: Any, **kwargs: Any) -> Any:
        """PATCH, checked (no path has one: 405)."""
        return self.open(*args, method="PATCH", **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        """DELETE, checked (no path has one: 405)."""
        return self.open(*args, method="DELETE", **kwargs)

    def head(self, *args: Any, **kwargs: Any) -> Any:
        """HEAD, checked as the GET it stands for, without a body."""
        return self.open(*args, method="HEAD", **kwargs)

    def options(self, *args: Any, **kwargs: Any) -> Any:
        """OPTIONS, checked: 200 with an Allow header."""
        return self.open(*args, method="OPTIONS", **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def __enter__(self) -> ContractClient:
        self.client.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.__exit__(*exc)


# The checks --------------------------------------------------------------

def _check(request: WerkzeugOpenAPIRequest, response: Response, has_body: bool) -> None:
    method = request.method.upper()
    where = f"{method} {request.request.full_path.rstrip('?')} -> {response.status_code}"
    response = _decoded(request, response, where)
    if method == "OPTIONS":
        _check_options(response, where)
        return
    if method == "HEAD":
        request = WerkzeugOpenAPIRequest(_rebuild("GET", request.request.full_path, None,
                                                  request.request.headers))
        errors = list(_openapi("headers").iter_response_errors(request, _HeadersOnly(response)))
    elif response.mimetype == EVENT_STREAM:
        errors = list(_openapi("headers").iter_response_errors(request, _HeadersOnly(response)))
        errors += _content_type_errors(request, response)
    else:
        errors = list(openapi().iter_response_errors(request, WerkzeugOpenAPIResponse(response)))
    if errors and isinstance(errors[0], PathNotFound | OperationNotFound):
        _check_outside_spec(errors[0], response, where)
        return
    if errors:
        raise ContractViolation(f"{where}: " + "; ".join(_describe(e) for e in errors))
    if has_body and 200 <= response.status_code < 300:
        refused = list(_openapi("request_body").iter_request_errors(request))
        if refused:
            raise ContractViolation(f"{where}, but the spec refuses the request body: "
                                    + "; ".join(_describe(e) for e in refused))


def _decoded(request: WerkzeugOpenAPIRequest, response: Response, where: str) -> Response:
    """Return the answer with its body as sent before any content coding: the answer itself
    if it has none, else a copy with the gzip undone (ContractViolation if it may not be
    gzipped, or is not)."""
    coding = response.headers.get("Content-Encoding")
    if coding is None:
        return response
    _expect(coding == "gzip", f"{where}: Content-Encoding {coding!r}, not gzip")
    _expect("gzip" in request.request.headers.get("Accept-Encoding", ""),
            f"{where}: gzipped for a client that did not take gzip")
    _expect("Accept-Encoding" in response.vary, f"{where}: gzipped without Vary: Accept-Encoding")
    _expect(response.mimetype != EVENT_STREAM and response.status_code not in (204, 304),
            f"{where}: an event stream or an answer without a body is never gzipped")
    if request.method.upper() == "HEAD":  # the GET's headers, no body
        return response
    try:
        body = zlib.decompress(response.get_data(), wbits=31)
    except zlib.error as error:
        raise ContractViolation(f"{where}: not gzip ({error})") from None
    headers = Headers([(k, v) for k, v in response.headers.items()
                       if k.lower() not in ("content-encoding", "content-length")])
    return Response(body, response.status_code, headers=headers)


def _check_outside_spec(error: Exception, response: Response, where: str) -> None:
    """An unknown path must answer a 404 problem, an unknown method a 405 with Allow, as the
    spec's info.description says."""
    status, slug = (404, "not-found") if isinstance(error, PathNotFound) \
        else (405, "method-not-allowed")
    _expect(response.status_code == status,
            f"{where}: not in the spec ({error}), so the answer must be {status}")
    _expect(response.mimetype == PROBLEM_JSON, f"{where}: not {PROBLEM_JSON}")
    body = response.get_json(force=True, silent=True)
    assert_fits_schema(body, "Problem")
    _expect(body["type"] == f"/problems/{slug}" and body["status"] == status,
            f"{where}: type {body['type']!r}, status {body['status']!r}")
    _expect(status != 405 or "Allow" in response.headers,
            f"{where}: a 405 names the allowed methods in Allow")
    _check_request_id(response, where)


def _check_options(response: Response, where: str) -> None:
    """OPTIONS: 200 with Allow, or a CORS preflight's 204 (both with X-Request-ID, and with
    no body, so no Content-Type)."""
    _expect(not response.data and "Content-Type" not in response.headers,
            f"{where}: an empty answer names no Content-Type")
    if response.status_code == 204:
        _expect("Access-Control-Allow-Methods" in response.headers,
                f"{where}: a 204 to OPTIONS is a CORS preflight answer")
    else:
        _expect(response.status_code == 200 and "Allow" in response.headers,
                f"{where}: OPTIONS answers 200 with an Allow header")
    _check_request_id(response, where)


def _check_request_id(response: Response, where: str) -> None:
    schema = spec_dict()["components"]["headers"]["RequestId"]["schema"]
    _expect(re.fullmatch(schema["pattern"].strip("^$"), response.headers.get("X-Request-ID", ""))
            is not None, f"{where}: no valid X-Request-ID header")


def _content_type_errors(request: WerkzeugOpenAPIRequest, response: Response) -> list[Exception]:
    path = _spec_path(request.request.path)
    if path is None:
        return []
    operation = spec_dict()["paths"][path].get(request.method.lower(), {})
    documented = operation.get("responses", {}).get(str(response.status_code), {})
    if "$ref" in documented:
        documented = spec_dict()["components"]["responses"][documented["$ref"].split("/")[-1]]
    if response.mimetype in documented.get("content", {}):
        return []
    return [ContractViolation(f"content type {response.mimetype!r} is not documented")]


def _spec_path(path: str) -> str | None:
    """Return the spec's path template that `path` fits, if any."""
    for template in spec_dict()["paths"]:
        parts = _TEMPLATE_PARAM.split(template)  # literal, name, literal, name, ...
        pattern = "".join("[^/]+" if i % 2 else re.escape(p) for i, p in enumerate(parts))
        if re.fullmatch(pattern, path):
            return str(template)
    return None


class _HeadersOnly(WerkzeugOpenAPIResponse):
    """A response whose body is never read (an endless stream, or the answer to a HEAD)."""

    @property
    def data(self) -> bytes:
        return b""


# Requests ----------------------------------------------------------------

def _request(method: str, path_template_or_url: str, body: Any,
             headers: Mapping[str, str] | None) -> WerkzeugOpenAPIRequest:
    split = urlsplit(path_template_or_url)
    path = _TEMPLATE_PARAM.sub(lambda m: m.group(1), split.path)
    full_path = f"{path}?{split.query}" if split.query else path
    if body is not None and not isinstance(body, str | bytes):
        body = json.dumps(body)
    return WerkzeugOpenAPIRequest(_rebuild(method, full_path, body, headers))


def _rebuild(method: str, full_path: str, body: Any,
             headers: Mapping[str, str] | Headers | None) -> Request:
    split = urlsplit(full_path)
    if body is not None and not isinstance(body, str | bytes):
        body = json.dumps(body)
    kept = Headers([(k, v) for k, v in (headers or {}).items()
                    if k.lower() not in ("content-type", "content-length")])
    builder = EnvironBuilder(method=method.upper(), path=split.path, query_string=split.query,
                             headers=kept, data=body,
                             content_type="application/json" if body is not None else None)
    try:
        return Request(builder.get_environ())
    finally:
        builder.close()


# Messages ----------------------------------------------------------------

def _describe(error: BaseException) -> str:
    details = [_describe_schema_error(e) for e in _schema_errors(error)]
    return f"{type(error).__name__}: " + (" | ".join(details) if details else str(error))


def _schema_errors(error: BaseException) -> Iterator[Any]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield from getattr(current, "schema_errors", ())
        todo += [current.__cause__, current.__context__]


def _describe_schema_error(error: Any) -> str:
    path = "/".join(str(p) for p in getattr(error, "absolute_path", ()))
    return f"at /{path}: {getattr(error, 'message', error)}"


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ContractViolation(message)
