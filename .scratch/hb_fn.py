import torch
def head_bias(q, k, v, b):
    s = q @ k.transpose(-2, -1) * 0.125 + b
    return torch.softmax(s, -1) @ v
