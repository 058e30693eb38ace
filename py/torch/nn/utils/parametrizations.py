"""torch.nn.utils.parametrizations: `weight_norm` as a parametrization
(`parametrizations.weight.original0` the magnitude g, `original1` the direction v)."""

from torch._missing import _missing_names
from torch.nn.modules import Module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        from torch.nn.utils import _weight_norm
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        from torch.nn.utils import _norm_except_dim
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    from torch.nn.utils import parametrize
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


__getattr__ = _missing_names("torch.nn.utils.parametrizations")
