import torch

x = torch.cos(torch.arange(2 * 3 * 10).float().view(2, 3, 10) * 0.7)
print(x.unfold(2, 4, 2), x.unfold(-1, 3, 3).shape, x.unfold(1, 2, 1)[1, :, 0])
print(x[0, 0].unfold(0, 5, 1), x.unfold(2, 10, 1).shape, x.unfold(0, 1, 1).shape)


def frames(signal):
    # Overlapping frames of a symbolic length, as an STFT or a patch embedding cuts them.
    cut = signal.unfold(-1, 4, 2)
    return cut * torch.hann_window(4, periodic=False)


compiled = torch.compile(frames, backend="eager", dynamic=True)
print(compiled(x), compiled(torch.sin(torch.arange(3 * 13).float().view(3, 13))))
compiled = torch.compile(frames, backend="eager")
print(compiled(x).shape, compiled(x[:, :, :9].contiguous()).shape, compiled(x[:, :, :7].contiguous()).shape)
