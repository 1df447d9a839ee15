import os; os.environ["JAX_PLATFORMS"]="cpu"
import torch, pallas_ir
from importlib import util
spec = util.spec_from_file_location("c", ".scratch/attn_cases.py")
