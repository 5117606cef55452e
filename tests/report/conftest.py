import sys
from pathlib import Path

# report_support.py (planning the examples, reading the plan's JSON) is shared by the tests here.
sys.path.insert(0, str(Path(__file__).parent))
