"""The user's own benchmark runs as ``fleetplan.v1.MeasuredPoint`` messages (issue 29).

``load_measurements(path, measured_as)`` reads fleetplan's JSONL of measured points, a vLLM
``bench serve`` result JSON, an AIPerf profile export (``profile_export_aiperf.json``) or a
GuideLLM benchmarks JSON, fills what the file does not say from ``--measured-as`` and refuses an
unknown format or an inconsistent point with the file and field (``MeasurementFileError``).
The service checks the points against the pricebook and the model.
"""

from clients.measurements.points import MeasurementFileError, load_measurements, parse_measured_as

__all__ = ["MeasurementFileError", "load_measurements", "parse_measured_as"]
