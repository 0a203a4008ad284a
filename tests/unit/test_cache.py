"""What a process keeps between requests: LRU maps, and values kept for one version."""

import sys
import threading

from service.usecases.cache import Lru, Versioned


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


def test_lru_shared_by_threads_without_a_lock_never_fails_and_stays_bounded():
    kept: Lru[int] = Lru(8)
    failures: list[BaseException] = []

    def churn(offset: int) -> None:
        try:
            for i in range(10_000):
                key = str((i + offset) % 12)
                kept.put(key, i)
                kept.get(str(i % 12))
                kept.take(str((i * 7) % 12))
        except BaseException as error:  # noqa: BLE001  # any failure of a step is the finding
            failures.append(error)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between almost every step
    try:
        threads = [threading.Thread(target=churn, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert failures == []
    kept.put("last", 0)  # one step alone trims back to the bound
    assert len(kept._items) <= 8 and kept.get("last") == 0
