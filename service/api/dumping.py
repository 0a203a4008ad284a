"""Marshmallow's `Schema.dump`, compiled once a schema: the same output, without marshmallow's
calls a field and a value (under bench/http.py's load they cost about 15% of the API's CPU).

A schema is compiled when each of its fields is one mirrored here, with no `data_key`,
`attribute` or `dump_default`, and it has no pre- or post-dump hook; else marshmallow's own
dump serves it. Each mirror does what the field's `_serialize` does (marshmallow 4), and a dict
lacking a field's key is read as marshmallow's `get_value` reads it: its attribute, if any.

The compiled dump is one function a schema, written out as source (as `dataclasses` writes
`__init__`) with each field's conversion inlined, so that a dict costs one call, not one a
field. For EndOut (`id = String()`, `value = Integer()`) it reads:

    def dump_one(obj):
        if type(obj) is not dict:
            return serialize(obj)                     # marshmallow's own, for an object
        out = {}
        v = obj.get('id', missing)
        if v is missing:
            v = getattr(obj, 'id', missing)
        if v is not missing:
            out['id'] = v if v is None or type(v) is str else text(v)
        v = obj.get('value', missing)
        ...
        return out
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.decorators import POST_DUMP, PRE_DUMP
from marshmallow.utils import ensure_text_type

Dump = Callable[[Any], Any]
_COMPILED = "_compiled_dump"


class _NotMirrored(Exception):
    """A field (or schema) that only marshmallow's own dump serves."""


def compiled(schema: Schema) -> Dump | None:
    """Return the compiled dump of one object by `schema` (made on first use), or None when
    marshmallow's own dump must serve it."""
    try:
        return schema.__dict__[_COMPILED]  # type: ignore[no-any-return]
    except KeyError:
        made = _compile(schema)
        schema.__dict__[_COMPILED] = made
        return made


def dump(schema: Schema, obj: Any, many: bool) -> Any:
    """Return `schema.dump(obj, many=many)`, compiled where it can be."""
    one = compiled(schema)
    if one is None:
        return Schema.dump(schema, obj, many=many)
    if many and obj is not None:
        return [one(item) for item in obj]
    return one(obj)


def _compile(schema: Schema) -> Dump | None:
    namespace: dict[str, Any] = {"missing": missing, "text": ensure_text_type,
                                 "serialize": schema._serialize}
    try:
        source = _source(schema, namespace)
    except _NotMirrored:
        return None
    exec(source, namespace)  # noqa: S102  # the source is made here, from field types only
    made: Dump = namespace["dump_one"]
    return made


def _source(schema: Schema, namespace: dict[str, Any]) -> str:
    """Return the source of `dump_one(obj)` for `schema`; raise _NotMirrored if it has none.
    An object that is not a plain dict goes to marshmallow's own `_serialize`."""
    if schema._hooks[PRE_DUMP] or schema._hooks[POST_DUMP]:
        raise _NotMirrored
    lines = ["def dump_one(obj):",
             "    if type(obj) is not dict:",
             "        return serialize(obj)",
             "    out = {}"]
    for number, (name, field) in enumerate(schema.dump_fields.items()):
        if "." in name or field.data_key is not None or field.attribute is not None \
                or field.dump_default is not missing:
            raise _NotMirrored
        value = _conversion(field, "v", f"f{number}", namespace)
        lines += [f"    v = obj.get({name!r}, missing)",
                  "    if v is missing:",
                  f"        v = getattr(obj, {name!r}, missing)",
                  "    if v is not missing:",
                  f"        out[{name!r}] = {value}"]
    return "\n".join([*lines, "    return out", ""])


def _conversion(field: fields.Field, value: str, name: str, namespace: dict[str, Any]) -> str:
    """Return an expression of `value` that does what the field's `_serialize` does to it;
    `name` is free for what the expression needs from `namespace`."""
    kind = type(field)
    if kind is fields.String:
        return f"{value} if {value} is None or type({value}) is str else text({value})"
    if kind is fields.Integer and not field.as_string:
        return f"{value} if type({value}) is int else None if {value} is None else int({value})"
    if kind is fields.Raw:
        return value
    if kind is fields.Dict and field.key_field is None and field.value_field is None:
        return f"None if {value} is None else dict({value})"
    if kind is fields.List:
        item = _conversion(field.inner, f"{name}_item", f"{name}i", namespace)
        return f"None if {value} is None else [{item} for {name}_item in {value}]"
    if kind is fields.Nested:
        nested, many = field.schema, field.schema.many or field.many
        one = compiled(nested)
        if one is None:
            namespace[name] = lambda obj: Schema.dump(nested, obj, many=many)
            return f"None if {value} is None else {name}({value})"
        namespace[name] = one
        dumped = f"[{name}(item) for item in {value}]" if many else f"{name}({value})"
        return f"None if {value} is None else {dumped}"
    raise _NotMirrored
