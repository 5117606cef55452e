"""Values of the fleetplan.v1 contract that the proto files cannot state, shared by the server
(``service``) and the clients (``clients``) so that neither side has to import the other."""

from __future__ import annotations

ERROR_DOMAIN = "fleetplan.v1"
"""``google.rpc.ErrorInfo.domain`` of every error the server sends."""
MAX_PERFORMANCE_CASES = 1000
"""Cases one EstimatePerformance request may carry (the server refuses more, naming the limit; the
CLI sends a longer batch file in requests of this size)."""
TOKEN_ENV = "FLEETPLAN_TOKEN"
"""Environment variable holding a bearer token: the server accepts it, the CLI sends it."""
