"""Independent checks of what fleetplan answers (issue 28): brute force through EvaluateFleet,
metamorphic relations between plans, the in-suite mutation fuzzer at a larger count and the
Mélange side by side, run together by ``python -m bench.independent_checks`` into
``bench/results/independent_checks.json`` (seeds, counts, load average, and every failure with
the request that shows it)."""
