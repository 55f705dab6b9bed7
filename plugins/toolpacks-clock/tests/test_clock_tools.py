"""The clock tools' results, time-zone handling and errors, through ``Tool.invoke``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

from toolpacks_clock import TOOLS, add_duration, convert_time, days_between, now


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


def error_of(tool: Tool, arguments: dict[str, Any]) -> str:
    """The error text a model would receive (the call must fail)."""
    result = run(tool, arguments)
    assert result.is_error, result.content
    return result.content


# -- definitions -------------------------------------------------------------------------------


def test_tags_and_hints() -> None:
    """All tools are read-only, closed-world and tagged time/read; only now is not idempotent."""
    for t in TOOLS:
        assert t.tags == {"time", "read"}
        assert t.hints.read_only is True
        assert t.hints.open_world is False
        assert t.hints.idempotent is (t.name != "now")


def test_parameters_are_described() -> None:
    """Every parameter of every tool has a description; to_tz is required."""
    for t in TOOLS:
        assert "Args:" not in t.description
        for name, schema in t.input_schema["properties"].items():
            assert schema.get("description"), f"{t.name}.{name}"
    assert convert_time.input_schema["required"] == ["time", "to_tz"]


# -- now ---------------------------------------------------------------------------------------


def test_now_defaults_to_utc() -> None:
    """now() is the current UTC time, to the second."""
    value = run(now, {}).value
    moment = datetime.fromisoformat(value.time)
    assert value.timezone == "UTC"
    assert value.utc_offset == "+00:00"
    assert abs(moment - datetime.now(UTC)) < timedelta(seconds=5)


def test_now_in_a_zone() -> None:
    """now(tz) is the same instant, with the zone's offset and weekday."""
    value = run(now, {"tz": "Asia/Kolkata"}).value
    moment = datetime.fromisoformat(value.time)
    assert value.utc_offset == "+05:30"
    assert value.abbreviation == "IST"
    assert value.weekday == moment.strftime("%A")
    assert abs(moment - datetime.now(UTC)) < timedelta(seconds=5)


# -- convert_time ------------------------------------------------------------------------------


def test_convert_time_between_zones() -> None:
    """09:30 in Paris in winter is 17:30 in Tokyo."""
    value = run(
        convert_time,
        {"time": "2025-03-01T09:30", "from_tz": "Europe/Paris", "to_tz": "Asia/Tokyo"},
    ).value
    assert value.time == "2025-03-01T17:30:00+09:00"
    assert value.timezone == "Asia/Tokyo"
    assert value.weekday == "Saturday"


def test_convert_time_applies_daylight_saving() -> None:
    """Summer time is applied on both sides of a conversion."""
    value = run(
        convert_time,
        {"time": "2025-07-01 09:30", "from_tz": "Europe/London", "to_tz": "America/New_York"},
    ).value
    assert value.time == "2025-07-01T04:30:00-04:00"
    assert value.abbreviation == "EDT"
    assert value.dst is True


def test_convert_time_offset_in_time_wins() -> None:
    """A time carrying its own offset ignores from_tz."""
    value = run(
        convert_time,
        {"time": "2025-03-01T09:30Z", "from_tz": "Europe/Paris", "to_tz": "Asia/Tokyo"},
    ).value
    assert value.time == "2025-03-01T18:30:00+09:00"


def test_convert_time_of_day_means_today() -> None:
    """A bare time of day is taken as today in from_tz (UTC by default)."""
    value = run(convert_time, {"time": "12:00", "to_tz": "Asia/Tokyo"}).value
    moment = datetime.fromisoformat(value.time)
    assert (moment.hour, moment.minute) == (21, 0)
    assert moment.astimezone(UTC).date() in {
        datetime.now(UTC).date(),
        (datetime.now(UTC) - timedelta(minutes=1)).date(),
    }


def test_convert_time_refuses_skipped_local_time() -> None:
    """A wall-clock time skipped by the spring-forward change is an error."""
    message = error_of(
        convert_time,
        {"time": "2025-03-30T02:30", "from_tz": "Europe/Paris", "to_tz": "UTC"},
    )
    assert "does not exist in Europe/Paris" in message


def test_convert_time_ambiguous_time_is_first_occurrence() -> None:
    """A wall-clock time repeated by the fall-back change is taken the first time (summer)."""
    value = run(
        convert_time,
        {"time": "2025-10-26T02:30", "from_tz": "Europe/Paris", "to_tz": "UTC"},
    ).value
    assert value.time == "2025-10-26T00:30:00+00:00"


def test_zone_names_forgive_case_and_spaces() -> None:
    """'america/new york' is America/New_York; 'utc' is UTC."""
    value = run(
        convert_time, {"time": "2025-01-01T12:00", "from_tz": "utc", "to_tz": "america/new york"}
    ).value
    assert value.timezone == "America/New_York"
    assert value.time == "2025-01-01T07:00:00-05:00"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"from_tz": "Mars/Olympus"}, "from_tz='Mars/Olympus' is not a known IANA time zone"),
        ({"to_tz": "Europe/Pari"}, "did you mean 'Europe/Paris'"),
        ({"to_tz": "PST"}, "'America/Los_Angeles'"),
        ({"to_tz": "America"}, "to_tz='America' is not a known IANA time zone"),
        ({"to_tz": "../../etc/passwd"}, "is not a known IANA time zone"),
        ({"to_tz": "/etc/localtime"}, "is not a known IANA time zone"),
        ({"to_tz": ""}, "is not a known IANA time zone"),
    ],
)
def test_unknown_time_zones_are_errors(arguments: dict[str, str], expected: str) -> None:
    """Unknown, partial or path-like zone names give an error naming the argument."""
    call = {"time": "2025-01-01T12:00", "from_tz": "UTC", "to_tz": "UTC", **arguments}
    assert expected in error_of(convert_time, call)


def test_now_unknown_zone_is_an_error() -> None:
    """now() with an unknown zone is an error suggesting real names."""
    assert "tz='Nowhere/City' is not a known IANA time zone" in error_of(
        now, {"tz": "Nowhere/City"}
    )


@pytest.mark.parametrize("time", ["yesterday", "2025-13-01T00:00", "25:00", "2025-02-30"])
def test_convert_time_bad_times_are_errors(time: str) -> None:
    """A time that is not ISO 8601 (or not a real date) is an error showing accepted forms."""
    message = error_of(convert_time, {"time": time, "to_tz": "UTC"})
    assert f"time={time!r} is not an ISO 8601 date or time" in message
    assert "'09:30'" in message


def test_convert_time_requires_to_tz() -> None:
    """Omitting to_tz is an invalid-arguments error, not a tool failure."""
    result = run(convert_time, {"time": "2025-01-01T12:00"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"


# -- add_duration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"start": "2024-01-31", "days": 30}, "2024-03-01"),
        ({"start": "2024-02-28", "days": 1}, "2024-02-29"),
        ({"start": "2025-02-28", "days": 1}, "2025-03-01"),
        ({"start": "2025-01-15", "days": -20}, "2024-12-26"),
        ({"start": "2025-01-15", "hours": 36}, "2025-01-16T12:00:00"),
        ({"start": "2025-03-01T18:00", "hours": -3, "minutes": -30}, "2025-03-01T14:30:00"),
        ({"start": "2025-03-01T23:00+01:00", "minutes": 90}, "2025-03-02T00:30:00+01:00"),
        ({"start": "2025-03-01T09:00", "days": 1}, "2025-03-02T09:00:00"),
    ],
)
def test_add_duration(arguments: dict[str, Any], expected: str) -> None:
    """Days, hours and minutes are added with the calendar's rules; dates stay dates."""
    assert run(add_duration, arguments).value == expected


def test_add_duration_errors() -> None:
    """A bad start or a result past year 9999 is an error."""
    assert "start='soon' is not an ISO 8601" in error_of(add_duration, {"start": "soon", "days": 1})
    assert "outside the supported years" in error_of(
        add_duration, {"start": "9999-12-31", "days": 1}
    )


# -- days_between ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("2025-01-01", "2025-12-25", 358),
        ("2025-12-25", "2025-01-01", -358),
        ("2024-02-01", "2024-03-01", 29),
        ("2025-03-01", "2025-03-01", 0),
        ("2025-03-01T23:59", "2025-03-02T00:01", 1),
    ],
)
def test_days_between(a: str, b: str, expected: int) -> None:
    """Calendar days from a to b, negative when b is earlier, times of day ignored."""
    assert run(days_between, {"a": a, "b": b}).value == expected


def test_days_between_bad_date() -> None:
    """A date that cannot be parsed is an error naming the argument."""
    message = error_of(days_between, {"a": "2025-01-01", "b": "not a date"})
    assert "b='not a date' is not an ISO 8601 date" in message
