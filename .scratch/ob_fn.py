import torch
def offset_bias(q, k, v, b):
    s = q @ k.transpose(-2, -1) * 0.125 + b[1:129, 3:131]
    return torch.softmax(s, -1) @ v
