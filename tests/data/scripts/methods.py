import torch

x = torch.cos(torch.arange(24).view(2, 3, 4) * 0.7) * 3
y = torch.sin(torch.arange(24).view(2, 3, 4) * 0.4) + 1.5
print(x.unflatten(2, (2, 2)).shape, x.view_as(x.reshape(4, 6)).shape, x.reshape_as(y).shape)
print(x.movedim(0, -1).shape, torch.movedim(x, (0, 1), (2, 0)).shape, x.swapaxes(0, 2).shape)
print(x.narrow(2, 1, 2), [t.shape for t in x.unbind(1)], torch.unbind(x)[1])
print(x.new_full((2, 2), 1.5), x.new_empty(3).shape, x.type_as(y).shape)
print(y.reciprocal(), torch.true_divide(x, y), x.floor_divide(y))
print(torch.remainder(x, y), torch.fmod(x, y), x.remainder(-1.5))
print(torch.lerp(x, y, 0.25), x.lerp(y, 0.75), x.lerp(y, torch.sigmoid(x)))
print(torch.addcmul(x, y, x, value=0.5), x.addcdiv(x, y), torch.addmm(y[0, :, :3], x[0], y[1].t()))


def step(a, b):
    # An optimiser-style update and a rotation of dims, for symbolic sizes.
    return a.addcdiv(b, b.abs() + 1, value=-0.1).lerp(b, 0.5).movedim(-1, 0)


compiled = torch.compile(step, dynamic=True)
print(compiled(x, y), compiled(x[:1, :2], y[:1, :2]))
