# torch.fft as model files use it: FNet's Fourier token mixing and mega's long convolution
# through rfft/irfft.
import torch
import torch.nn as nn

x = torch.cos(torch.arange(2 * 6 * 4).float().view(2, 6, 4) * 0.45)
print(torch.fft.fft(x[0, 0]), torch.fft.rfft(x[0, :, 0]), torch.fft.ifft(torch.fft.fft(x[1, 2])).real)
print(torch.fft.fft2(x).real[1], torch.fft.fftn(x, dim=(1, 2), norm="ortho").imag[0, 1])
print(torch.fft.irfft(torch.fft.rfft(x, dim=1), n=6, dim=1)[0], torch.fft.rfft(x[0, 0], n=6, norm="forward"))
print(torch.fft.irfft(torch.fft.rfft(x[0, :5, 1]), n=5), torch.fft.fftfreq(5), torch.fft.rfftfreq(6, d=0.5))
print(torch.fft.ifft2(torch.fft.fft2(x[0])).real[2], torch.fft.fft(x[0, :, 1]).abs())


class FNetBlock(nn.Module):
    def forward(self, x):
        return torch.fft.fft(torch.fft.fft(x, dim=-1), dim=-2).real


class LongConv(nn.Module):
    # mega's EMA as a convolution: the kernel and the signal through rfft of length 2n.
    def forward(self, x, k):
        n = x.shape[1]
        y = torch.fft.irfft(torch.fft.rfft(x, n=2 * n, dim=1) * torch.fft.rfft(k, n=2 * n, dim=0).unsqueeze(0),
                            n=2 * n, dim=1)
        return y[:, :n]


with torch.no_grad():
    for model, args in ((FNetBlock(), lambda n: (torch.sin(torch.arange(2 * n * 4).float().view(2, n, 4)),)),
                        (LongConv(), lambda n: (torch.sin(torch.arange(2 * n * 3).float().view(2, n, 3)),
                                                torch.cos(torch.arange(n * 3).float().view(n, 3))))):
        compiled = torch.compile(model, backend="eager", dynamic=True)
        for n in (6, 8, 5):
            print(compiled(*args(n))[1, :2])
