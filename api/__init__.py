"""The fleetplan.v1 API as Python: generated protobuf messages and gRPC stubs (``api.fleetplan.v1``).

Everything under ``api/fleetplan/`` is generated from ``proto/`` by ``python -m api.codegen``
(``make stubs``) and checked in; a test fails when it is stale. Both the service and the clients
import it; it imports nothing of the project's own. Written by hand, what the two sides share
beyond the proto files: ``contract`` (values the proto cannot state) and ``credentials`` (TLS and
token files).
"""
