"""The JSON log lines' time stamps."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from service.logs import utc_millis


@given(st.floats(0, 4e9) | st.integers(0, 4 * 10**9).map(lambda s: s + 0.9999996))
def test_log_times_are_rfc3339_utc_to_the_millisecond_as_datetime_writes_them(created):
    expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    assert utc_millis(created) == expected
