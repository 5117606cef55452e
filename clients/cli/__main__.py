"""``python -m clients.cli``: the ``fleetplan`` command."""

from clients.cli.app import main

raise SystemExit(main())
