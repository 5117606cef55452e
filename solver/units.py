"""Calendar and unit constants, written once (every module converts with these).

A month is the average calendar month, 365 / 12 days, so that twelve months make a year of
8,760 hours; money per month × 12 is money per year, and hourly rents × ``HOURS_PER_MONTH`` are
monthly rents.
"""

from __future__ import annotations

HOURS_PER_DAY = 24
"""Hours in a day, and the number of hour-of-day slots in a daily demand profile."""
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0
MONTHS_PER_YEAR = 12.0
DAYS_PER_MONTH = 365.0 / 12.0
"""Average days in a month (30.42)."""
HOURS_PER_MONTH = 8760.0 / 12.0
"""Average hours in a month (730): converts hourly rents and power into monthly figures."""
TOKENS_PER_MILLION = 1_000_000
WATTS_PER_KW = 1000.0
