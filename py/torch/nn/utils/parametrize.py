"""torch.nn.utils.parametrize: a parameter computed from others on every access, as
PyTorch's `register_parametrization` makes it: the module's class is swapped for a subclass
whose `name` is a property, and the originals live under `parametrizations.<name>`."""

from torch._missing import _missing_names
from torch.nn.modules import Module, ModuleDict, Parameter


class ParametrizationList(Module):
    """The parametrizations of one tensor and its originals (`original`, or `original0`,
    `original1`, … where `right_inverse` splits it)."""

    def __init__(self, modules, original):
        super().__init__()
        self.modules = modules
        first = modules[0]
        split = first.right_inverse(original) if hasattr(first, "right_inverse") else original
        if isinstance(split, (tuple, list)):
            self.is_tensor = False
            self.ntensors = len(split)
            for i, tensor in enumerate(split):
                setattr(self, f"original{i}", Parameter(tensor))
        else:
            self.is_tensor = True
            self.original = Parameter(split)

    def forward(self):
        if self.is_tensor:
            value = self.modules[0](self.original)
        else:
            value = self.modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in self.modules[1:]:
            value = module(value)
        return value


def _parametrized_class(module):
    cls = type(module)
    if getattr(cls, "_tailor_parametrized", False):
        return cls
    return type(f"Parametrized{cls.__name__}", (cls,), {"_tailor_parametrized": True})


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].modules.append(parametrization)
        return module
    original = getattr(module, tensor_name)
    if tensor_name in module._parameters:
        del module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        del module._buffers[tensor_name]
    if "parametrizations" not in module._modules:
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original)
    cls = _parametrized_class(module)
    setattr(cls, tensor_name, property(lambda self: self.parametrizations[tensor_name]()))
    module.__class__ = cls
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module._modules.get("parametrizations")
    if parametrizations is None:
        return False
    return tensor_name is None or tensor_name in parametrizations._modules


__getattr__ = _missing_names("torch.nn.utils.parametrize")
