"""Proto ↔ domain, the only place where protobuf messages and domain objects meet.

Split by message family; error wording and path mapping apart:

- ``enums``       proto enum numbers ↔ domain values (every table derived by name)
- ``paths``       proto field paths, and domain locations translated into them
- ``violations``  pydantic errors and conversion problems in words, with their paths
- ``fields``      reading optional proto fields into the dicts pydantic validates
- ``money``       Money messages and decimal text
- ``references``  pricebook ids checked, GPU aliases resolved, overrides tried once
- ``scenario``    workloads, constraints, overrides, options and fleets → domain requests
- ``catalog``     ListCatalog
- ``provenance``  which pricebook, model and server produced an answer
- ``plan``        plan results → the Plan message
- ``evaluate``, ``break_even``, ``performance``, ``sweep``: one module per remaining RPC
- ``encode``      domain requests → proto requests, for the Python client

Import the modules themselves (``from service.convert import scenario``); this package re-exports nothing.
"""
