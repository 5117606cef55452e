import sys
from pathlib import Path

# Lets tests import the hand-built instance helpers in opt_factories.py and the benchmark's
# portfolio generator (importlib import mode does not put these directories on sys.path).
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[3]))
