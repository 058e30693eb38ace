"""`torch.autograd` as a model file uses it while it runs forward: a `Function` subclass's
`apply` runs its `forward` with a context, as Dynamo traces it inline (the graph holds the
ops of `forward`; `backward` is never called, since capture is forward only)."""

import _tailor
from torch.autograd import function
from torch.autograd.function import Function, FunctionCtx, once_differentiable


def Variable(tensor, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper: the tensor itself, as in PyTorch since."""
    return tensor


def grad(*args, **kwargs):
    _tailor.unsupported("torch.autograd.grad", "capture is forward only: no gradients")
