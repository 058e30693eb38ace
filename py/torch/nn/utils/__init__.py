"""torch.nn.utils: weight normalisation as PyTorch applies it, a forward pre-hook that
computes a module's weight from a direction `weight_v` and a magnitude `weight_g` before
each call (Dynamo inlines the hook, so the weight is computed in the graph), and the
`parametrizations` form of it."""

from torch._missing import _missing_names
from torch.nn.modules import Parameter
from torch.nn.utils import parametrizations, parametrize


def _norm_except_dim(v, dim):
    """The 2-norm of `v` over every dim but `dim` (all of them for dim=-1), kept broadcastable
    against `v`, as `torch.norm_except_dim` gives it."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = [d for d in range(v.dim()) if d != dim % v.dim()]
    return (v * v).sum(dims, keepdim=True).sqrt()


def _weight_norm(v, g, dim=0):
    return v * (g / _norm_except_dim(v, dim))


class WeightNorm:
    """The pre-hook `weight_norm` installs: `name` is recomputed from `name_g` and
    `name_v` before every forward."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook, _ in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim)))
        module.register_parameter(name + "_v", Parameter(weight))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for key, (hook, _) in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


__getattr__ = _missing_names("torch.nn.utils")
