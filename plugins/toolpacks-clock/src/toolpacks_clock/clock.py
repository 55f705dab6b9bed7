"""The clock tools: the current time, time-zone conversion and date arithmetic.

Pure functions over ``datetime`` and ``zoneinfo`` (the IANA time-zone database); only
``now`` reads the system clock. Every bad input becomes a ``ToolError`` saying what to send.
"""

from __future__ import annotations

import difflib
import functools
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from datetime import time as clock_time
from typing import TypeVar
from zoneinfo import ZoneInfo

from toolpacks import ToolError, tool

__all__ = [
    "WEEKDAYS",
    "ZonedTime",
    "add_duration",
    "convert_time",
    "days_between",
    "now",
]

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""English weekday names, Monday first (``date.weekday()`` order; independent of locale)."""

TAGS = frozenset({"time", "read"})
_DATE_EXAMPLES = "for example '2025-03-01', '2025-03-01T09:30' or '2025-03-01T09:30+01:00'"
_TIME_EXAMPLES = "for example '2025-03-01T09:30', '2025-03-01T09:30+01:00' or '09:30'"

_Day = TypeVar("_Day", date, datetime)


@dataclass(frozen=True, slots=True)
class ZonedTime:
    """A moment as seen in one time zone."""

    time: str
    """ISO 8601 date and time with its UTC offset, such as ``2025-03-01T17:30:00+09:00``."""
    timezone: str
    """The IANA time-zone name, such as ``Asia/Tokyo``."""
    utc_offset: str
    """The offset from UTC at that moment, such as ``+09:00``."""
    abbreviation: str
    """The zone's abbreviation at that moment, such as ``JST`` or ``CEST``."""
    weekday: str
    """The day of the week there, such as ``Saturday``."""
    dst: bool
    """Whether daylight saving time is in effect there."""


@tool(tags=TAGS, read_only=True, idempotent=False, open_world=False)
def now(tz: str = "UTC") -> ZonedTime:
    """Get the current date and time in a time zone.

    Use it whenever the answer depends on today's date or the current time; never guess
    them. The result includes the UTC offset, the weekday and whether daylight saving time
    is in effect.

    Args:
        tz: An IANA time-zone name such as 'UTC', 'Europe/Paris' or 'America/New_York'.
    """
    zone = _zone(tz, "tz")
    return _zoned(datetime.now(zone), zone)


@tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
def convert_time(time: str, from_tz: str = "UTC", *, to_tz: str) -> ZonedTime:
    """Convert a date and time from one time zone to another.

    Use it to answer "what time is it in X when it is T in Y" or to compare meeting times
    across zones. Daylight saving time is taken into account. A time that does not exist
    in from_tz (skipped when clocks go forward) is an error; an ambiguous one (repeated when
    clocks go back) is taken as its first occurrence.

    Args:
        time: The time to convert, in ISO 8601: '2025-03-01T09:30', '2025-03-01 09:30',
            '2025-03-01' (midnight) or '09:30' (today in from_tz). If it carries a UTC
            offset ('2025-03-01T09:30+01:00' or a final 'Z'), the offset is used and
            from_tz is ignored.
        from_tz: The IANA time zone the time is expressed in, such as 'Europe/Paris'.
        to_tz: The IANA time zone to convert to, such as 'Asia/Tokyo'.
    """
    source = _zone(from_tz, "from_tz")
    target = _zone(to_tz, "to_tz")
    moment = _localize(_parse_moment(time, "time", source), source, time)
    return _zoned(moment.astimezone(target), target)


@tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
def add_duration(start: str, days: int = 0, hours: int = 0, minutes: int = 0) -> str:
    """Add (or, with negative numbers, subtract) days, hours and minutes to a date or time.

    Use it for deadlines and schedules ("90 days after 2025-01-15", "3 hours before
    18:00 on 2025-03-01") instead of counting by hand; month lengths and leap years are
    handled. A date without a time gives a date when only days are added. A time without
    a UTC offset is treated as wall-clock time; one with an offset keeps that offset.

    Args:
        start: The starting date or date-time in ISO 8601, such as '2025-01-15' or
            '2025-03-01T18:00'.
        days: Days to add; negative to go back.
        hours: Hours to add; negative to go back.
        minutes: Minutes to add; negative to go back.
    """
    delta = timedelta(days=days, hours=hours, minutes=minutes)
    text = start.strip()
    if _is_date_only(text) and not (hours or minutes):
        return _shifted(_parse_date(text, "start"), delta).isoformat()
    return _shifted(_parse_datetime(text, "start"), delta).isoformat()


@tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
def days_between(a: str, b: str) -> int:
    """Count the calendar days from date a to date b.

    Use it for "how many days until..." or "how long ago was..." questions. The result is
    positive when b is after a, negative when it is before, and 0 for the same day. Times of
    day, if given, are ignored: only the calendar dates count.

    Args:
        a: The first date, in ISO 8601 such as '2025-01-01' (a date-time is cut to its date).
        b: The second date, in the same form.
    """
    return (_calendar_date(b, "b") - _calendar_date(a, "a")).days


# -- parsing ---------------------------------------------------------------------------------


@functools.cache
def _zone_names() -> dict[str, str]:
    """Known zone names by their folded form (lower case, spaces as underscores)."""
    return {_fold(name): name for name in zoneinfo.available_timezones()}


def _fold(name: str) -> str:
    return name.strip().replace(" ", "_").casefold()


def _zone(name: str, argument: str) -> ZoneInfo:
    """The ``ZoneInfo`` for ``name``, forgiving case and spaces, or a ToolError."""
    candidates = [name.strip()]
    canonical = _zone_names().get(_fold(name))
    if canonical is not None:
        candidates.append(canonical)
    for candidate in candidates:
        try:
            return ZoneInfo(candidate)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            continue
    if name.strip().isalpha() and name.strip().isupper() and len(name.strip()) <= 5:
        hint = (
            "; abbreviations such as PST or CEST are ambiguous and mostly not zone names, so "
            "use the Region/City name of a place in that zone (PST: 'America/Los_Angeles')"
        )
    elif close := difflib.get_close_matches(_fold(name), list(_zone_names()), n=3, cutoff=0.6):
        hint = f"; did you mean {' or '.join(repr(_zone_names()[c]) for c in close)}?"
    else:
        hint = ""
    raise ToolError(
        f"{argument}={name!r} is not a known IANA time zone; use a name such as 'UTC', "
        f"'Europe/Paris' or 'America/New_York'{hint}"
    )


def _is_date_only(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _parse_date(text: str, argument: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ToolError(f"{argument}={text!r} is not an ISO 8601 date; use YYYY-MM-DD") from None


def _parse_datetime(text: str, argument: str) -> datetime:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ToolError(
            f"{argument}={text!r} is not an ISO 8601 date or date-time; {_DATE_EXAMPLES}"
        ) from None


def _parse_moment(text: str, argument: str, zone: ZoneInfo) -> datetime:
    """A date, date-time or time of day (today in ``zone``) as a datetime."""
    stripped = text.strip()
    try:
        return datetime.fromisoformat(stripped)
    except ValueError:
        pass
    try:
        time_of_day = clock_time.fromisoformat(stripped)
    except ValueError:
        raise ToolError(
            f"{argument}={text!r} is not an ISO 8601 date or time; {_TIME_EXAMPLES}"
        ) from None
    return datetime.combine(datetime.now(zone).date(), time_of_day)


def _calendar_date(text: str, argument: str) -> date:
    return _parse_datetime(text, argument).date()


def _localize(moment: datetime, zone: ZoneInfo, original: str) -> datetime:
    """Attach ``zone`` to a naive time, refusing a wall-clock time the zone skips."""
    if moment.tzinfo is not None:
        return moment
    local = moment.replace(tzinfo=zone)
    if local.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != moment:
        raise ToolError(
            f"{original!r} does not exist in {zone.key}: the clocks jump forward over it "
            "(daylight saving time starts); use a time outside that gap"
        )
    return local


def _shifted(value: _Day, delta: timedelta) -> _Day:
    try:
        return value + delta
    except OverflowError:
        raise ToolError("the result is outside the supported years 1 to 9999") from None


def _zoned(moment: datetime, zone: tzinfo) -> ZonedTime:
    offset = moment.utcoffset() or timedelta(0)
    dst = moment.dst()
    return ZonedTime(
        time=moment.replace(microsecond=0).isoformat(),
        timezone=str(zone),
        utc_offset=_format_offset(offset),
        abbreviation=moment.tzname() or "",
        weekday=WEEKDAYS[moment.weekday()],
        dst=bool(dst),
    )


def _format_offset(offset: timedelta) -> str:
    total = int(offset.total_seconds())
    sign = "-" if total < 0 else "+"
    hours, remainder = divmod(abs(total), 3600)
    return f"{sign}{hours:02d}:{remainder // 60:02d}"
