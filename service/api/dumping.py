"""Marshmallow's `Schema.dump`, compiled once a schema: the same output, without marshmallow's
calls a field and a value (under bench/http.py's load they cost about 15% of the API's CPU).

A schema is compiled when each of its fields is one mirrored here, with no `data_key`,
`attribute` or `dump_default`, and it has no pre- or post-dump hook; else marshmallow's own
dump serves it. Each mirror does what the field's `_serialize` does (marshmallow 4), and a dict
lacking a field's key is read as marshmallow's `get_value` reads it: its attribute, if any.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.decorators import POST_DUMP, PRE_DUMP
from marshmallow.utils import ensure_text_type

Dump = Callable[[Any], Any]
_COMPILED = "_compiled_dump"


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
    if schema._hooks[PRE_DUMP] or schema._hooks[POST_DUMP]:
        return None
    plan = []
    for name, field in schema.dump_fields.items():
        convert = _converter(field)
        if convert is None or "." in name or field.data_key is not None \
                or field.attribute is not None or field.dump_default is not missing:
            return None
        plan.append((name, convert))
    serialize = schema._serialize  # marshmallow's, for an object that is not a plain dict

    def dump_one(obj: Any) -> Any:
        if type(obj) is not dict:
            return serialize(obj)
        out = {}
        for name, convert in plan:
            value = obj.get(name, missing)
            if value is missing:
                value = getattr(obj, name, missing)
                if value is missing:
                    continue
            out[name] = convert(value)
        return out
    return dump_one


def _converter(field: fields.Field) -> Callable[[Any], Any] | None:
    """Return what the field's `_serialize` does to a value, or None if not mirrored here."""
    kind = type(field)
    if kind is fields.String:
        return _text
    if kind is fields.Integer and not field.as_string:
        return _integer
    if kind is fields.Raw:
        return _same
    if kind is fields.Dict and field.key_field is None and field.value_field is None:
        return _mapping
    if kind is fields.List:
        return _listed(field.inner)
    if kind is fields.Nested:
        return _nested(field)
    return None


def _text(value: Any) -> Any:
    return value if value is None or type(value) is str else ensure_text_type(value)


def _integer(value: Any) -> Any:
    return None if value is None else int(value)


def _same(value: Any) -> Any:
    return value


def _mapping(value: Any) -> Any:
    return None if value is None else dict(value)


def _listed(inner: fields.Field) -> Callable[[Any], Any] | None:
    convert = _converter(inner)
    if convert is None:
        return None
    return lambda value: None if value is None else [convert(item) for item in value]


def _nested(field: fields.Nested) -> Callable[[Any], Any]:
    schema = field.schema
    many = schema.many or field.many
    return lambda value: None if value is None else dump(schema, value, many)
