import sys
from pathlib import Path

# Lets tests import the helpers in reliability_support.py and the load benchmark (bench.load):
# importlib import mode does not put these directories on sys.path.
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

from reliability_support import certs, channel, server

__all__ = ["certs", "channel", "server"]
