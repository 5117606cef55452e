import sys
from pathlib import Path

# Lets tests import the hand-built instance helpers in opt_factories.py (importlib import mode).
sys.path.insert(0, str(Path(__file__).parent))
