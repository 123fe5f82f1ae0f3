"""A TorchScript module (torch.jit.trace of an identity) whose buffers are a state dict's
tensors under the same names: TorchScript's container for weights whose model cannot be
traced or scripted here, for the tests and fuzz seeds of swinrun's TorchScript reader."""
import torch


class _Node(torch.nn.Module):
    def forward(self, x):
        return x


def module_of_state_dict(sd):
    root = _Node()
    for key, t in sd.items():
        *path, leaf = key.split(".")
        m = root
        for p in path:
            if not hasattr(m, p):
                m.add_module(p, _Node())
            m = getattr(m, p)
        m.register_buffer(leaf, t.clone())
    return torch.jit.trace(root, torch.zeros(1))
