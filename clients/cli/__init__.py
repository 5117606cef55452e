"""The ``fleetplan`` command line.

    fleetplan serve [--address 127.0.0.1:50051] [--pricebook DIR]
    fleetplan plan SCENARIO.yaml                      # PlanFleetRequest-shaped YAML
    fleetplan evaluate SCENARIO.yaml [--fleet h200-sxm:4:buy,rtx-pro-6000-server:16]
    fleetplan estimate --gpu h100-sxm --model ministral-3-14b --precision fp8 --input-len 7000 \
        --output-len 1024 --concurrency 50            # or: --cases FILE.jsonl [--output FILE.jsonl]
    fleetplan breakeven SCENARIO.yaml [--gpu h200-sxm] [--utilization 0.6]
    fleetplan catalog [--kind gpu --kind offer]
    fleetplan sweep SCENARIO.yaml --dimension capex_budget --values 1e8,2e8,3e8 [--csv frontier.csv]

Client commands talk to ``--target host:port``; without it they start the real server in-process
on a free loopback port and call it through the real client. Output: readable tables (default),
``--json`` (protobuf JSON mapping, proto field names) or ``--markdown``.

Exit status: 0 success; 2 invalid input (the message names the file/field and the reason);
3 the plan is infeasible or found no solution; 1 any other error.

Modules: ``app`` (entry point, errors → exit status), ``parser`` (arguments), ``commands`` (plan,
evaluate, breakeven, catalog), ``estimate``, ``sweep``, ``report`` and ``plans`` (their commands),
``connection`` (``--target`` or the in-process server), ``serve`` (``serve`` and the in-process
server: the only module that imports the server, loaded by those alone), ``output`` (JSON or text),
``exits`` (exit status).
"""

from clients.cli.app import main
from clients.cli.exits import EXIT_ERROR, EXIT_INVALID, EXIT_NO_PLAN, EXIT_OK
from clients.cli.parser import build_parser

__all__ = ["EXIT_ERROR", "EXIT_INVALID", "EXIT_NO_PLAN", "EXIT_OK", "build_parser", "main"]
