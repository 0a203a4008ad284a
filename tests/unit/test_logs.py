"""The JSON log lines: their time stamps, and values orjson cannot write."""

import json
import logging
import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from service.adapters.bootstrap import utc_now
from service.adapters.logs import JsonFormatter, utc_millis


@given(st.floats(0, 4e9) | st.integers(0, 4 * 10**9).map(lambda s: s + 0.9999996))
def test_log_times_are_rfc3339_utc_to_the_millisecond_as_datetime_writes_them(created):
    expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    assert utc_millis(created) == expected
    assert utc_millis(created, "Z") == expected.replace("+00:00", "Z")


def test_the_event_clock_is_now_in_utc_to_the_millisecond():
    before = datetime.now(UTC)
    stamp = utc_now()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) \
        <= datetime.fromisoformat(stamp) <= after


def test_a_line_with_values_orjson_refuses_is_still_one_json_line():
    record = logging.makeLogRecord({"msg": "odd", "big": 2**70, "text": "\ud800"})
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["big"] == 2**70 and entry["text"] == "\ud800" and entry["message"] == "odd"
