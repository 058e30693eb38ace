"""nn.Module and the layers, in Python over `_tailor`'s tensors.

`Module.__setattr__` registers parameters, buffers and submodules as PyTorch does, so
`named_parameters()` and `state_dict()` give PyTorch's dotted names (`layers.0.weight`);
the capture names each parameter's graph node after them. A layer's `forward` is the
`torch.nn.functional` call PyTorch makes.
"""

import _tailor
from torch._tensor import Tensor
from torch.nn import functional as F


# The attribute types a capture guards by value when it reads them.
_CONSTANT_TYPES = (bool, int, float)


class _ParameterMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and _tailor.is_state(instance)


class Parameter(metaclass=_ParameterMeta):
    """A tensor that is module state: `Parameter(torch.randn(4, 4))`."""

    def __new__(cls, data=None, requires_grad=True):
        state = _tailor.as_state(data)
        state.requires_grad = requires_grad
        return state


class _HookHandle:
    """What `register_forward_hook` returns: `remove()` takes the hook out again."""

    _next_id = 0

    def __init__(self, hooks, entry, prepend):
        _HookHandle._next_id += 1
        self.id = _HookHandle._next_id
        self._hooks = hooks
        if prepend:
            items = list(hooks.items())
            hooks.clear()
            hooks[self.id] = entry
            hooks.update(items)
        else:
            hooks[self.id] = entry

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    """The base of every layer and model: attributes registered in assignment order.

    A module starts in training mode, as in PyTorch (`eval()` leaves it). While `forward`
    is captured, reading a bool, int or float attribute of a module is reported to
    `_tailor` (`__getattribute__`), which guards it as Dynamo guards the attributes a trace
    read (`L['self'].training == True`).
    """

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", {})
        object.__setattr__(self, "_forward_hooks", {})

    def __setattr__(self, name, value):
        registries = self.__dict__.get("_parameters"), self.__dict__.get("_modules")
        if isinstance(value, (Parameter, Module)) and None in registries:
            raise AttributeError(
                f"cannot assign '{name}' before {type(self).__name__}.__init__() calls "
                "super().__init__()"
            )
        for registry in (self.__dict__.get("_parameters"), self.__dict__.get("_buffers"),
                         self.__dict__.get("_modules")):
            if registry is not None and name in registry and not isinstance(value, (Tensor, Module)):
                del registry[name]
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif name in self.__dict__.get("_buffers", {}):
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        # A plain tensor attribute is reported too: the capture lifts it (`L['self'].A`).
        if (type(value) in _CONSTANT_TYPES or isinstance(value, Tensor)) and _tailor.tracing():
            _tailor.attribute_read(self, name, value)
        return value

    def __getattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            values = self.__dict__.get(registry, {})
            if name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            values = self.__dict__.get(registry, {})
            if name in values:
                del values[name]
                return
        object.__delattr__(self, name)

    def __call__(self, *args, **kwargs):
        # Hooks run as PyTorch runs them (Dynamo inlines them into the graph): a pre-hook may
        # replace the arguments (weight_norm computes the weight in one), a hook the output.
        for hook, with_kwargs in self.__dict__.get("_forward_pre_hooks", {}).values():
            if with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook, with_kwargs in self.__dict__.get("_forward_hooks", {}).values():
            result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return _HookHandle(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        return _HookHandle(self._forward_hooks, (hook, with_kwargs), prepend)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"module '{type(self).__name__}' has no forward method")

    # ---- registration ------------------------------------------------------------------------

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._buffers[name] = None if tensor is None else _tailor.as_state(tensor)
        if tensor is not None:
            self._buffers[name].requires_grad = False
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    # ---- traversal -------------------------------------------------------------------------

    def get_submodule(self, target):
        module = self
        for name in target.split(".") if target else []:
            if name not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
            module = module._modules[name]
        return module

    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                child = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, child)

    def _named_members(self, registry, prefix, recurse):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True):
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        return (value for _, value in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True):
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        return (value for _, value in self.named_buffers(recurse=recurse))

    def named_children(self):
        return ((name, m) for name, m in self._modules.items() if m is not None)

    def children(self):
        return (m for _, m in self.named_children())

    def modules(self):
        return (m for _, m in self.named_modules())

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """PyTorch's order: each module's parameters, then its persistent buffers, then its
        children's; a tensor shared by two paths (a tied weight) is there under both."""
        state = {} if destination is None else destination
        for name, value in self._parameters.items():
            if value is not None:
                state[prefix + name] = value
        for name, value in self._buffers.items():
            if value is not None and name not in self._non_persistent_buffers_set:
                state[prefix + name] = value
        for name, module in self._modules.items():
            if module is not None:
                Module.state_dict(module, state, prefix + name + ".")
        return state

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- modes and devices: capture is device independent ----------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        return None

    def to(self, *args, **kwargs):
        return self

    def cuda(self, device=None):
        return self

    def cpu(self):
        return self

    def float(self):
        return self

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"  ({name}): " + repr(m).replace("\n", "\n  ")
                 for name, m in self.named_children()]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)"


# ---- containers ------------------------------------------------------------------------------


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*modules[index])
        return modules[index]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(modules[index])
        return modules[index]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)

    def __setitem__(self, index, module):
        modules = list(self._modules.values())
        modules[index] = module
        self._renumber(modules)

    def __delitem__(self, index):
        modules = list(self._modules.values())
        del modules[index]
        self._renumber(modules)

    def _renumber(self, modules):
        """Registers `modules` as "0", "1", … as PyTorch's list numbers them."""
        self._modules.clear()
        for module in modules:
            self.append(module)


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        for name, module in (modules or {}).items():
            self.add_module(name, module)

    def __getitem__(self, name):
        return self._modules[name]

    def __setitem__(self, name, module):
        self.add_module(name, module)

    def __contains__(self, name):
        return name in self._modules

    def __iter__(self):
        return iter(self._modules)

    def __len__(self):
        return len(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


# ---- layers ----------------------------------------------------------------------------------


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _tailor.parameter([out_features, in_features], "uniform", in_features)
        if bias:
            self.bias = _tailor.parameter([out_features], "uniform", in_features)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """The constructor's fills again (Kaiming-uniform weight, bias bound 1/sqrt(fan_in))."""
        _tailor.set_init(self.weight, "uniform", self.in_features)
        if self.bias is not None:
            _tailor.set_init(self.bias, "uniform", self.in_features)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}"


def _init_conv(module, n, in_channels, out_channels, kernel_size, stride, padding,
               dilation, groups, bias, transposed):
    """The attributes and parameters of `nn.Conv*d` / `nn.ConvTranspose*d`: the weight is
    [out, in / groups, *k], transposed [in, out / groups, *k]; PyTorch's fan_in is its dim 1
    times the kernel's size."""
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    module.in_channels = in_channels
    module.out_channels = out_channels
    module.kernel_size = _tuple(kernel_size, n)
    module.stride = _tuple(stride, n)
    module.padding = _tuple(padding, n)
    module.dilation = _tuple(dilation, n)
    module.groups = groups
    rows, per_group = (in_channels, out_channels) if transposed else (out_channels, in_channels)
    fan_in = per_group // groups
    for k in module.kernel_size:
        fan_in = fan_in * k
    shape = [rows, per_group // groups, *module.kernel_size]
    module.weight = _tailor.parameter(shape, "uniform", fan_in)
    if bias:
        module.bias = _tailor.parameter([out_channels], "uniform", fan_in)
    else:
        module.register_parameter("bias", None)


_PADDING_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate",
                  "circular": "circular"}


class _ConvNd(Module):
    """`padding` as numbers, or PyTorch's `'valid'` (none) and `'same'` (the output as long
    as the input at stride 1: dilation * (k - 1) in all, the extra one on the right); a
    `padding_mode` other than zeros, and an uneven `'same'`, pad the input explicitly with
    `F.pad` and convolve it unpadded, as PyTorch's `_conv_forward` does."""

    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode="zeros"):
        super().__init__()
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        named = padding if isinstance(padding, str) else None
        if named is not None and named not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{named}', should be one of "
                             f"{{'valid', 'same'}}")
        _init_conv(self, n, in_channels, out_channels, kernel_size, stride,
                   0 if named is not None else padding, dilation, groups, bias, False)
        if named == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        self.padding_mode = padding_mode
        if named is not None:
            self.padding = named
        # Per spatial dim, (before, after).
        if named == "same":
            self._sides = F._same_sides(self.kernel_size, self.dilation)
        elif named == "valid":
            self._sides = [(0, 0)] * n
        else:
            self._sides = [(p, p) for p in self.padding]

    def forward(self, input):
        sides = self._sides
        if self.padding_mode == "zeros" and all(a == b for a, b in sides):
            padding = [a for a, _ in sides]
        else:
            amounts = []
            for before, after in reversed(sides):
                amounts += [before, after]
            input = F.pad(input, amounts, _PADDING_MODES[self.padding_mode])
            padding = [0] * len(sides)
        return F._conv(input, self.weight, self.bias, list(self.stride), padding,
                       list(self.dilation), self.groups, len(sides))


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)


class _ConvTransposeNd(Module):
    def __init__(self, n, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, groups, bias, dilation):
        super().__init__()
        _init_conv(self, n, in_channels, out_channels, kernel_size, stride, padding, dilation,
                   groups, bias, True)
        self.output_padding = _tuple(output_padding, n)
        self._n = n

    def forward(self, input, output_size=None):
        if output_size is not None:
            _tailor.unsupported("ConvTranspose with output_size=",
                                "give output_padding in the constructor instead")
        return F._conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                                 self.output_padding, self.groups, self.dilation, self._n)


class ConvTranspose1d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation)


class ConvTranspose2d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation)


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, [num_features], affine)
        if track_running_stats:
            # Made as module state in place: register_buffer would copy the tensor.
            self._buffers["running_mean"] = _tailor.parameter([num_features], "fill", 0.0)
            self._buffers["running_var"] = _tailor.parameter([num_features], "fill", 1.0)
        else:
            self._buffers["running_mean"] = None
            self._buffers["running_var"] = None

    def forward(self, input):
        # PyTorch's reads, in its order: the mode decides batch or running statistics.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            bn_training, self.momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    pass


class BatchNorm2d(_BatchNorm):
    pass


class BatchNorm3d(_BatchNorm):
    pass


def _affine_parameters(module, shape, affine):
    """A normalisation's `weight` (ones) and `bias` (zeros), or both None."""
    if affine:
        module.weight = _tailor.parameter(shape, "fill", 1.0)
        module.bias = _tailor.parameter(shape, "fill", 0.0)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, [num_channels], affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class _InstanceNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, [num_features], affine)
        if track_running_stats:
            self._buffers["running_mean"] = _tailor.parameter([num_features], "fill", 0.0)
            self._buffers["running_var"] = _tailor.parameter([num_features], "fill", 1.0)

    def forward(self, input):
        # In eval mode the running statistics are used when they are tracked.
        use_input_stats = self.training or not self.track_running_stats
        running = (self.running_mean, self.running_var) if self.track_running_stats \
            else (None, None)
        return F.instance_norm(input, running[0], running[1], self.weight, self.bias,
                               use_input_stats, self.momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    pass


class InstanceNorm2d(_InstanceNorm):
    pass


class InstanceNorm3d(_InstanceNorm):
    pass


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.normalized_shape = _tuple(normalized_shape, 1)
        self.eps = eps
        _affine_parameters(self, list(self.normalized_shape), elementwise_affine)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _tuple(normalized_shape, 1)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _tailor.parameter(list(self.normalized_shape), "fill", 1.0)
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)


class ParameterList(Module):
    """Parameters registered as "0", "1", … as PyTorch's list names them."""

    def __init__(self, values=None):
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value):
        self.register_parameter(str(len(self)), Parameter(value))
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, index):
        return list(self._parameters.values())[index]


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 2)
        self.stride = self.kernel_size if stride is None else _tuple(stride, 2)
        self.padding = _tuple(padding, 2)
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 2)
        self.stride = self.kernel_size if stride is None else _tuple(stride, 2)
        self.padding = _tuple(padding, 2)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class _Pad(Module):
    mode = "constant"
    dims = 2

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = tuple(_tuple(padding, 2 * self.dims))
        self.value = value

    def forward(self, input):
        return F.pad(input, list(self.padding), self.mode, self.value)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_Pad):
    mode, dims = "reflect", 1


class ReflectionPad2d(_Pad):
    mode, dims = "reflect", 2


class ReplicationPad1d(_Pad):
    mode, dims = "replicate", 1


class ReplicationPad2d(_Pad):
    mode, dims = "replicate", 2


class ZeroPad1d(_Pad):
    dims = 1


class ZeroPad2d(_Pad):
    dims = 2


class ConstantPad1d(_Pad):
    dims = 1

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(_Pad):
    dims = 2

    def __init__(self, padding, value):
        super().__init__(padding, value)


class _Activation(Module):
    function = "relu"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return _tailor.op(self.function, input)


class ReLU(_Activation):
    function = "relu"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)


class SiLU(_Activation):
    function = "silu"


class Sigmoid(_Activation):
    function = "sigmoid"


class Tanh(_Activation):
    function = "tanh"


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0)


class Hardsigmoid(Module):
    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, input):
        return F.hardsigmoid(input)


class Hardswish(Module):
    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, input):
        return F.hardswish(input)


class _Functional(Module):
    """A module that calls one function of `F` with the options it was built with."""

    function = None
    # (name, default) in PyTorch's positional order.
    options = ()

    def __init__(self, *args, **kwargs):
        super().__init__()
        values = dict(self.options)
        values.update(zip(values, args))
        values.update({k: v for k, v in kwargs.items() if k in values})
        self.values = values

    def forward(self, input):
        return type(self).function(input, **self.values)

    def extra_repr(self):
        return ", ".join(f"{name}={value}" for name, value in self.values.items())


# Modules that call one function of F: (name, function, options with their defaults).
_FUNCTIONAL_MODULES = [
    ("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0))),
    ("LogSigmoid", F.logsigmoid, ()),
    ("ELU", F.elu, (("alpha", 1.0),)),
    ("CELU", F.celu, (("alpha", 1.0),)),
    ("SELU", F.selu, ()),
    ("Mish", F.mish, ()),
    ("Softsign", F.softsign, ()),
    ("Tanhshrink", F.tanhshrink, ()),
    ("GLU", F.glu, (("dim", -1),)),
    ("AdaptiveMaxPool2d", F.adaptive_max_pool2d, (("output_size", None),)),
    ("AdaptiveAvgPool1d", F.adaptive_avg_pool1d, (("output_size", None),)),
    ("AdaptiveMaxPool1d", F.adaptive_max_pool1d, (("output_size", None),)),
    ("MaxPool1d", F.max_pool1d, (("kernel_size", None), ("stride", None), ("padding", 0),
                                 ("dilation", 1), ("return_indices", False),
                                 ("ceil_mode", False))),
    ("AvgPool1d", F.avg_pool1d, (("kernel_size", None), ("stride", None), ("padding", 0),
                                 ("ceil_mode", False), ("count_include_pad", True))),
    ("MaxPool3d", F.max_pool3d, (("kernel_size", None), ("stride", None), ("padding", 0),
                                 ("dilation", 1), ("return_indices", False),
                                 ("ceil_mode", False))),
    ("AvgPool3d", F.avg_pool3d, (("kernel_size", None), ("stride", None), ("padding", 0),
                                 ("ceil_mode", False), ("count_include_pad", True),
                                 ("divisor_override", None))),
    ("AdaptiveAvgPool3d", F.adaptive_avg_pool3d, (("output_size", None),)),
    ("AdaptiveMaxPool3d", F.adaptive_max_pool3d, (("output_size", None),)),
    ("Threshold", F.threshold, (("threshold", None), ("value", None))),
    ("Softmin", F.softmin, (("dim", None),)),
    ("Softshrink", F.softshrink, (("lambd", 0.5),)),
    ("Hardshrink", F.hardshrink, (("lambd", 0.5),)),
    ("ChannelShuffle", F.channel_shuffle, (("groups", None),)),
    ("LocalResponseNorm", F.local_response_norm, (("size", None), ("alpha", 1e-4),
                                                  ("beta", 0.75), ("k", 1.0))),
]
for _name, _function, _options in _FUNCTIONAL_MODULES:
    globals()[_name] = type(_name, (_Functional,), {
        "function": staticmethod(_function),
        "options": _options,
    })


class _Loss(_Functional):
    """A loss: the function of F on the prediction and the target."""

    def forward(self, input, target):
        return type(self).function(input, target, **self.values)


# Losses: (name, function of F, options with their defaults, in the module's order).
_REDUCTION = (("size_average", None), ("reduce", None), ("reduction", "mean"))
_LOSS_MODULES = [
    ("L1Loss", F.l1_loss, _REDUCTION),
    ("MSELoss", F.mse_loss, _REDUCTION),
    ("SmoothL1Loss", F.smooth_l1_loss, _REDUCTION + (("beta", 1.0),)),
    ("BCELoss", F.binary_cross_entropy, (("weight", None),) + _REDUCTION),
    ("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
     (("weight", None),) + _REDUCTION + (("pos_weight", None),)),
    ("CrossEntropyLoss", F.cross_entropy, (("weight", None), ("size_average", None),
                                           ("ignore_index", -100), ("reduce", None),
                                           ("reduction", "mean"), ("label_smoothing", 0.0))),
    ("NLLLoss", F.nll_loss, (("weight", None), ("size_average", None), ("ignore_index", -100),
                             ("reduce", None), ("reduction", "mean"))),
    ("HuberLoss", F.huber_loss, (("reduction", "mean"), ("delta", 1.0))),
    ("KLDivLoss", F.kl_div, _REDUCTION + (("log_target", False),)),
    ("SoftMarginLoss", F.soft_margin_loss, _REDUCTION),
    ("HingeEmbeddingLoss", F.hinge_embedding_loss, (("margin", 1.0),) + _REDUCTION),
]
for _name, _function, _options in _LOSS_MODULES:
    globals()[_name] = type(_name, (_Loss,), {
        "function": staticmethod(_function),
        "options": _options,
    })


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = _tailor.parameter([num_parameters], "fill", init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class _Dropout(Module):
    """Dropout and its kin (1d/2d/3d, the alpha dropouts): F's function with `p` and the
    mode."""

    function = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self).function(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


for _name, _function in (("Dropout", F.dropout), ("Dropout1d", F.dropout1d),
                         ("Dropout2d", F.dropout2d), ("Dropout3d", F.dropout3d),
                         ("AlphaDropout", F.alpha_dropout),
                         ("FeatureAlphaDropout", F.feature_alpha_dropout)):
    globals()[_name] = type(_name, (_Dropout,), {"function": staticmethod(_function)})


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class MarginRankingLoss(Module):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.margin = margin
        self.reduction = reduction

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    """`x1ᵀ A x2 + b`, initialised as PyTorch's: uniform in ±1/sqrt(in1_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = _tailor.parameter([out_features, in1_features, in2_features], "uniform",
                                        in1_features)
        self.bias = _tailor.parameter([out_features], "uniform", in1_features) if bias else None

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        if max_norm is not None:
            _tailor.unsupported("nn.Embedding with max_norm",
                                "it renormalises the looked-up rows of the weight in place")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is not None:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        elif padding_idx is None:
            self.weight = _tailor.parameter([num_embeddings, embedding_dim], "normal", 1.0)
        else:
            # N(0, 1) with the padding row zeroed, as PyTorch's reset_parameters leaves it.
            import torch

            weight = torch.randn(num_embeddings, embedding_dim)
            keep = (torch.arange(num_embeddings) != padding_idx).unsqueeze(1)
            self.weight = Parameter(torch.where(keep, weight, 0.0))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else f"{text}, padding_idx={self.padding_idx}"


class MultiheadAttention(Module):
    """PyTorch's nn.MultiheadAttention: its projections' parameters, given to
    F.multi_head_attention_forward (sequence first: a batch-first call is transposed)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            _tailor.unsupported("nn.MultiheadAttention with add_bias_kv or add_zero_attn", "")
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        # xavier_uniform_ over each projection weight, biases zero (PyTorch's _reset_parameters).
        if self._qkv_same_embed_dim:
            bound = (6.0 / (embed_dim + 3 * embed_dim)) ** 0.5
            self.in_proj_weight = _tailor.parameter([3 * embed_dim, embed_dim], "bounded", bound)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.register_parameter("in_proj_weight", None)
            for name, width in (("q", embed_dim), ("k", self.kdim), ("v", self.vdim)):
                bound = (6.0 / (width + embed_dim)) ** 0.5
                setattr(self, f"{name}_proj_weight",
                        _tailor.parameter([embed_dim, width], "bounded", bound))
        if bias:
            self.in_proj_bias = _tailor.parameter([3 * embed_dim], "fill", 0.0)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if bias:
            self.out_proj.bias = _tailor.parameter([embed_dim], "fill", 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, None, None, False, self.dropout, self.out_proj.weight,
            self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        return (out.transpose(1, 0) if self.batch_first and batched else out), weights


class TransformerEncoderLayer(Module):
    """PyTorch's encoder layer: self-attention and a feed-forward block, each dropped out
    in training, added to its input and layer-normalised after (or, with norm_first,
    normalised before)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _get_clones(module, n):
    import copy
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The causal mask: -inf above the diagonal, 0 on and below it."""
    import torch
    return torch.triu(torch.full((sz, sz), float("-inf"), dtype=dtype), diagonal=1)


def _get_seq_len(src, batch_first):
    size = src.size()
    if len(size) == 2:
        return size[0]
    return size[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """PyTorch's check: a mask given without `is_causal` is compared with the causal mask
    of its size, and the comparison read as a bool (a graph break inside `forward`, as in
    PyTorch)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal_comparison = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if mask.size() == causal_comparison.size():
            make_causal = bool((mask == causal_comparison).all())
        else:
            make_causal = False
    return make_causal


class TransformerEncoder(Module):
    """A stack of copies of one encoder layer, then an optional norm, as PyTorch's. Under
    `torch.compile` PyTorch never takes its nested-tensor fast path (its mask check refuses
    while compiling), so the layers see the padding mask, which is what runs here, compiled
    or not. (Eagerly in eval mode without gradients PyTorch's fast path gives zeros at
    padded positions instead; Tailor computes them as the compiled call does.)"""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(
            mask=src_key_padding_mask, mask_name="src_key_padding_mask",
            other_type=F._none_or_dtype(mask), other_name="mask", target_type=src.dtype)
        mask = F._canonical_mask(mask=mask, mask_name="mask", other_type=None, other_name="",
                                 target_type=src.dtype, check_other=False)
        output = src
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """PyTorch's decoder layer: self-attention, attention over the memory and a
    feed-forward block, each dropped out, added and layer-normalised after (or, with
    norm_first, normalised before)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in ("relu", "gelu"):
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
            activation = F.relu if activation == "relu" else F.gelu
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """A stack of copies of one decoder layer, then an optional norm, as PyTorch's."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """PyTorch's encoder-decoder: an encoder stack and a decoder stack, each ending in a
    LayerNorm, their weights re-initialised with `xavier_uniform_` as PyTorch's are."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        elif self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, device, dtype)

    def _reset_parameters(self):
        from torch.nn import init
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


# Last: the recurrent layers build on Module.
from torch.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell  # noqa: E402
