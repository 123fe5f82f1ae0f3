"""A module tree whose buffers are a state dict's tensors under the same names, as a TorchScript
module (torch.jit.trace of an identity) or for torch.save(module): the containers of weights
whose model is not at hand, for the tests and fuzz seeds of swinrun's readers of whole modules."""
import torch


class _Node(torch.nn.Module):
    def forward(self, x):
        return x


def module_tree(sd):
    """An nn.Module tree whose buffers are sd's tensors under the same names (picklable whole)."""
    root = _Node()
    for key, t in sd.items():
        *path, leaf = key.split(".")
        m = root
        for p in path:
            if not hasattr(m, p):
                m.add_module(p, _Node())
            m = getattr(m, p)
        m.register_buffer(leaf, t.clone())
    return root


def module_of_state_dict(sd):
    return torch.jit.trace(module_tree(sd), torch.zeros(1))
