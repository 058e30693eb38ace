"""einops' `pack` and `unpack`, from their documented semantics: `pack(tensors, 'b * d')`
flattens each tensor's dims that the `*` stands for into one and concatenates the tensors
along it, returning the packed tensor and each tensor's `*` dims; `unpack(packed, shapes,
'b * d')` splits that axis back into the tensors of those shapes (one of which may hold a
-1, inferred). Reshapes, a concatenation and slices, so a capture sees those ops.
"""

from einops._backends import get_backend
from einops._recipe import EinopsError


def _around_star(pattern, operation):
    """How many axes the pattern names before and after its `*`."""
    axes = pattern.split()
    if len(axes) != len(set(axes)):
        raise EinopsError(f'Duplicates in axes names in {operation}(..., "{pattern}")')
    if "*" not in axes:
        raise EinopsError(f'No *-axis in {operation}(..., "{pattern}")')
    before = axes.index("*")
    return before, len(axes) - before - 1


def _product(sizes):
    total = 1
    for size in sizes:
        total = total * size
    return total


def pack(tensors, pattern):
    import torch
    before, after = _around_star(pattern, "pack")
    get_backend(tensors[0])
    pieces, shapes = [], []
    for i, tensor in enumerate(tensors):
        shape = list(tensor.shape)
        if len(shape) < before + after:
            raise EinopsError(f"packed tensor #{i} (enumeration starts with 0) has shape "
                              f"{tuple(shape)}, while pattern {pattern} assumes at least "
                              f"{before + after} axes")
        end = len(shape) - after
        shapes.append(tuple(shape[before:end]))
        pieces.append(tensor.reshape(shape[:before] + [_product(shape[before:end])] + shape[end:]))
    return torch.cat(pieces, dim=before), shapes


def unpack(tensor, packed_shapes, pattern):
    before, after = _around_star(pattern, "unpack")
    get_backend(tensor)
    shape = list(tensor.shape)
    if len(shape) != before + 1 + after:
        raise EinopsError(f"unpack(..., {pattern}) received input of wrong dim with shape "
                          f"{tuple(shape)}")
    lengths = [None if -1 in list(s) else _product(s) for s in packed_shapes]
    unknown = [i for i, length in enumerate(lengths) if length is None]
    if len(unknown) > 1:
        raise EinopsError(f"unpack(..., {pattern}) received more than one -1 in "
                          f"{packed_shapes} and can't infer dimensions")
    if unknown:
        known = 0
        for length in lengths:
            known = known + (length or 0)
        lengths[unknown[0]] = shape[before] - known
    out, offset = [], 0
    for element_shape, length in zip(packed_shapes, lengths):
        piece = tensor.narrow(before, offset, length)
        out.append(piece.reshape(shape[:before] + list(element_shape) + shape[before + 1:]))
        offset = offset + length
    return out
