"""The fake model of tests/pipeline/probe.c in torch, for MONAI's sliding_window_inference:
logits[c](w) = s_c * (c + 1) * x(w) + 0.05 * c * cos(0.37 w0 + 0.11 c w1 + 0.23 w2), s_c = -1
for even c, w the position inside the window, x input channel c mod in_channels; with one
channel (a sigmoid model)
0.5 - x(w) + 0.05 cos(0.37 w0 + 0.23 w2). Position-dependent, so overlapping windows
disagree and blending matters."""
import torch


def make_fake(channels, in_channels=1):
    def fake(x):  # (B, in_channels, r0, r1, r2) -> (B, channels, r0, r1, r2)
        r0, r1, r2 = x.shape[2:]
        a = torch.arange(r0, dtype=torch.float64)[:, None, None]
        b = torch.arange(r1, dtype=torch.float64)[None, :, None]
        d = torch.arange(r2, dtype=torch.float64)[None, None, :]
        outs = []
        if channels == 1:
            pos = (0.05 * torch.cos(0.37 * a + 0.0 * b + 0.23 * d)).to(x.dtype)
            return (0.5 - x[:, 0] + pos)[:, None]
        for c in range(channels):
            s = (1.0 if c % 2 else -1.0) * (c + 1)
            pos = (0.05 * c * torch.cos(0.37 * a + 0.11 * c * b + 0.23 * d)).to(x.dtype)
            outs.append(s * x[:, c % in_channels] + pos)
        return torch.stack(outs, 1)

    return fake
