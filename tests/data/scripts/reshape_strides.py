# reshape and view decide view or copy from strides, and every size they compare is a guard:
# `view(-1, 4)` of a contiguous tensor records `((s0*s1)//4) != s0` and the rest of
# torch._refs' view algorithm; a transpose, a permute and `contiguous()` change what is
# asked. (The argument is `t`: PyTorch orders a product's symbols by their hashed names,
# which for `t` is the order of its dims, as Tailor prints them.)
import torch


def flat(t):
    return t.reshape(-1)


def rows_of_four(t):
    return t.view(-1, 4)


def transposed_flat(t):
    return t.transpose(0, 1).reshape(-1)


def merged_in_memory(t):
    # (c, a, b) strided (1, b*c, c): a and b are adjacent in memory, so this is a view.
    return t.permute(2, 0, 1).reshape(t.shape[2], -1)


def copied(t):
    # (a, c, b) strided (b*c, 1, c): c and b are not, so this is a copy.
    return t.permute(0, 2, 1).reshape(t.shape[0], -1)


def made_contiguous(t):
    return t.t().contiguous().view(-1, 2)


def rows_by_default(t):
    return t.view(-1, 4)


for fn, shapes in [
    (flat, [(6, 8), (5, 8)]),
    (rows_of_four, [(6, 8), (5, 8), (3, 4), (7, 4)]),
    (transposed_flat, [(6, 8), (5, 3)]),
    (merged_in_memory, [(3, 4, 5), (2, 6, 5)]),
    (copied, [(3, 4, 5), (2, 6, 7)]),
    (made_contiguous, [(6, 8), (4, 5)]),
]:
    compiled = torch.compile(fn, dynamic=True)
    for shape in shapes:
        print(fn.__name__, shape, tuple(compiled(torch.randn(*shape)).shape))

# Default mode: static first, then the changed dim is a symbol and the view asks again.
compiled = torch.compile(rows_by_default)
for shape in [(6, 8), (5, 8), (3, 8), (3, 4)]:
    print("rows_by_default", shape, tuple(compiled(torch.randn(*shape)).shape))
