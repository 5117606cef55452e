"""The performance model's calibration: ``points`` (measurement rows → model inputs, predictions)
and ``fit`` (``python -m tools.calibration.fit`` writes ``solver/perf/calibration.json``)."""
