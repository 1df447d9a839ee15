import os, sys, traceback
os.environ["JAX_PLATFORMS"] = "cpu"
import torch, pallas_ir
torch.manual_seed(0)

def plain(q, k, v):
    s = q @ k.transpose(-2, -1) * 0.125
    return torch.softmax(s, -1) @ v

def causal(q, k, v):
    T = q.shape[-2]
    s = q @ k.transpose(-2, -1) * 0.125
    m = torch.ones(T, T, dtype=torch.bool).tril()
    s = s.masked_fill(~m, float("-inf"))
    return torch.softmax(s, -1) @ v

def head_bias(q, k, v, b):  # b: (H,1,1)
    s = q @ k.transpose(-2, -1) * 0.125 + b
    return torch.softmax(s, -1) @ v

def batch_head_bias(q, k, v, b):  # (B,H,1,1)
    s = q @ k.transpose(-2, -1) * 0.125 + b
    return torch.softmax(s, -1) @ v

def tb_bias(q, k, v, b):  # b: (T,B) buffer -> bias[b]  transpose
    s = q @ k.transpose(-2, -1) * 0.125 + b.t()[:, None, :, None]
    return torch.softmax(s, -1) @ v

def offset_bias(q, k, v, b):
    T = q.shape[-2]
    s = q @ k.transpose(-2, -1) * 0.125 + b[1:T + 1, 3:T + 3]
    return torch.softmax(s, -1) @ v

B, H, D = 2, 4, 64
def qkv(T):
    return [torch.randn(B, H, T, D) for _ in range(3)]
cases = {
  "plain_T1000": (plain, qkv(1000)),
  "plain_T1500": (plain, qkv(1500)),
  "causal_T1000": (causal, qkv(1000)),
  "plain_T200": (plain, qkv(200)),
  "head_bias": (head_bias, qkv(256) + [torch.randn(H, 1, 1)]),
  "batch_head_bias": (batch_head_bias, qkv(256) + [torch.randn(B, H, 1, 1)]),
  "tb_bias": (tb_bias, qkv(256) + [torch.randn(256, B)]),
  "offset_bias": (offset_bias, qkv(256) + [torch.randn(260, 260)]),
}
only = sys.argv[1:]
for name, (fn, ins) in cases.items():
    if only and name not in only: continue
    try:
        k = pallas_ir.compile(fn, ins)
        got = k(*ins)
        err = (got - fn(*ins)).abs().max().item()
        raised = "ta.attention" in str(k.ir.get("raise-attention", ""))
        print(f"{name}: ok err={err:.2e} launches={k.source.count('pl.pallas_call(')} raised={raised}")
    except Exception as e:
        print(f"{name}: FAIL {type(e).__name__}: {str(e)[:300]}")
