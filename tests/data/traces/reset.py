# A function compiled twice with torch._dynamo.reset() between (the eager back end): under
# dynamic=None batch 3 recompiles with the batch a symbol; after the reset the ids start again
# at 0/0, and under dynamic=True one entry serves both batches. Its PyTorch 2.15 trace is
# reset.log.
import torch


def scaled(x):
    return (x * 2).sum(-1)


for mode in [None, True]:
    torch._dynamo.reset()
    f = torch.compile(scaled, dynamic=mode, backend="eager")
    for batch in [2, 3, 4]:
        print(mode, batch, tuple(f(torch.ones(batch, 5)).shape))
