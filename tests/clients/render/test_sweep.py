"""clients.render.sweep: swept values read as the user typed them."""

from __future__ import annotations

from clients.render.sweep import swept_value


def test_swept_values_read_as_typed() -> None:
    assert [swept_value(v) for v in (0.5, 1.0, 1.5, 30.0, 500_000_000.0)] == [
        "0.5",
        "1",
        "1.5",
        "30",
        "500,000,000",
    ]
