"""What a process keeps between requests: LRU maps, and values kept for one version."""

from service.cache import Lru, Versioned


def test_lru_drops_the_least_recently_used_entry_first():
    kept: Lru[int] = Lru(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now "b" is the oldest
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)
    assert kept.take("a") == 1 and kept.get("a") is None


def test_versioned_makes_a_value_once_a_version_and_keeps_only_the_last():
    made: list[tuple[str, int]] = []
    kept: Versioned[str] = Versioned(2)

    def at(key: str, version: int) -> str:
        def make() -> str:
            made.append((key, version))
            return f"{key}@{version}"
        return kept.get(key, version, make)

    assert [at("g", 1), at("g", 1), at("g", 2), at("g", 1)] == ["g@1", "g@1", "g@2", "g@1"]
    assert made == [("g", 1), ("g", 2), ("g", 1)]
    at("h", 1)
    at("i", 1)  # a third key: "g", the least recently used, is dropped
    assert at("g", 1) == "g@1" and made[-1] == ("g", 1) and len(made) == 6
