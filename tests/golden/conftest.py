import sys
from pathlib import Path

# The 500M KRW seed portfolio lives in bench/solver_scaling.py (the benchmark times it too).
sys.path.insert(0, str(Path(__file__).parents[2]))
