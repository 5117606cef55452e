import sys
from pathlib import Path

# recorded.py (the recorded responses and their renderers) is shared by the tests in this folder.
sys.path.insert(0, str(Path(__file__).parent))
