"""Time units, in one place: traces count microseconds, reports milliseconds.

Three different things used to share the name `_ms`; they are apart here:
- `ms_from_us(us)`: a trace duration (µs) as a report value (ms, rounded);
- `round_ms(ms)`: a millisecond value rounded for a report;
- `format_ms(ms)`: a millisecond value as text for people ("1.234 ms", "-" when unknown).
"""

from __future__ import annotations

from typing import Optional

US_PER_MS = 1000.0
# decimals kept in reports: µs-derived values keep sub-microsecond resolution; step-level
# figures (ms per step, savings) keep 4; per-pass timings 3
REPORT_DIGITS = 6


def ms_from_us(us: Optional[float], digits: int = REPORT_DIGITS) -> Optional[float]:
    """Microseconds (trace time) to milliseconds, rounded; None stays None."""
    return None if us is None else round(us / US_PER_MS, digits)


def round_ms(ms: Optional[float], digits: int = 3) -> Optional[float]:
    """A value already in milliseconds, rounded; None stays None."""
    return None if ms is None else round(ms, digits)


def format_ms(ms: Optional[float], digits: int = 3) -> str:
    """Milliseconds as text: '1.234 ms', '-' when unknown."""
    return "-" if ms is None else f"{ms:.{digits}f} ms"
