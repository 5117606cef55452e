import sys
from pathlib import Path

# Lets tests import the helpers in reliability_support.py (importlib import mode).
sys.path.insert(0, str(Path(__file__).parent))

from reliability_support import certs, channel, server  # noqa: E402

__all__ = ["certs", "channel", "server"]
