import sys
from pathlib import Path

# cli_support.py (running the command in-process) is shared by the tests in this folder.
sys.path.insert(0, str(Path(__file__).parent))
