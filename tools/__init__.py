"""Developer tools: scripts that need the dev-only dependencies (``pip install -e .[dev]``).

Not part of the installed package (``pyproject.toml`` packages api, pricebook, solver, service and
clients only); nothing in those imports ``tools``.
"""
