"""API_KEYS: back ends' keys named by their hash, parsed once and found in constant time."""

from __future__ import annotations

import hashlib

import pytest

from service.adapters.api_keys import ApiKey, find_key, parse_api_keys
from service.usecases.clients import Client

A, B = hashlib.sha256(b"key-a").hexdigest(), hashlib.sha256(b"key-b").hexdigest()


def test_entries_name_a_hash_and_maybe_a_quota() -> None:
    keys = parse_api_keys(f" alpha:{A}:120 , beta.2:{B.upper()},", 60_000)
    assert keys == (ApiKey("alpha", A, 120), ApiKey("beta.2", B, 60_000))
    assert keys[0].client == Client("key:alpha", keyed=True)
    assert parse_api_keys("", 5) == ()


@pytest.mark.parametrize("text", [
    "alpha:key-a",  # the key itself, not its hash
    f"alpha:{A[:-1]}",
    f"al{{pha}}:{A}",  # a name that would break a Redis hash tag
    f"alpha:{A}:-1",
    f"alpha:{A}:ten",
    f"alpha:{A},alpha:{B}",
    f"alpha:{A},beta:{A}",
])
def test_a_malformed_entry_is_refused_without_showing_it(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_api_keys(text, 10)
    assert "key-a" not in str(refused.value) and A[:16] not in str(refused.value)


def test_a_key_is_found_by_its_hash_and_its_hash_is_no_key() -> None:
    keys = parse_api_keys(f"alpha:{A},beta:{B}", 10)
    assert find_key(keys, "key-b") == keys[1]
    assert find_key(keys, B) is None and find_key(keys, "") is None
    assert find_key(keys, "key-a ") is None
