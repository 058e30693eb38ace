"""`torch.autograd.function`: `Function`, whose `apply` runs `forward` with a context, as
Dynamo traces it inline (capture is forward only: `backward` is never called)."""


class FunctionCtx:
    """What `forward` stores for `backward`: kept, and otherwise unused."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass


class Function:
    """`class F(torch.autograd.Function)` with static `forward(ctx, ...)` and `backward`."""

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(False for _ in args)
        return cls.forward(ctx, *args, **kwargs)


def once_differentiable(fn):
    return fn
