import torch
import torch.nn as nn


def fill(module):
    # Weights both sides compute alike (cosines of ramps), given as parameters.
    for i, (name, p) in enumerate(list(module.named_parameters())):
        ramp = torch.arange(p.numel()).view(*p.shape) * (0.7 + 0.1 * i)
        owner, _, leaf = name.rpartition(".")
        setattr(module.get_submodule(owner), leaf, nn.Parameter(torch.cos(ramp) * 0.4))
    return module.eval()


def ramp(*shape, step=0.9):
    return torch.sin(torch.arange(torch.Size(shape).numel()).view(*shape) * step)


with torch.no_grad():
    x = ramp(5, 2, 3)
    rnn = fill(nn.RNN(3, 4))
    print(rnn)
    print([name for name, _ in rnn.named_parameters()])
    print(rnn(x))
    rnn = fill(nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bidirectional=True, batch_first=True))
    print([name for name, _ in rnn.named_parameters()])
    print(rnn(x.transpose(0, 1), ramp(4, 2, 4, step=0.3)))
    gru = fill(nn.GRU(3, 4, num_layers=2))
    print(gru(x, ramp(2, 2, 4, step=0.4)))
    print(gru(x[:, 0]))
    lstm = fill(nn.LSTM(3, 4, bidirectional=True, batch_first=True))
    print(lstm(x.transpose(0, 1), (ramp(2, 2, 4, step=0.2), ramp(2, 2, 4, step=0.6))))
    lstm = fill(nn.LSTM(input_size=3, hidden_size=2, num_layers=2, bias=False))
    print([name for name, _ in lstm.named_parameters()])
    print(lstm(x))
    print(fill(nn.RNNCell(3, 4))(x[0]))
    print(fill(nn.GRUCell(3, 4))(x[0], ramp(2, 4, step=0.5)))
    print(fill(nn.LSTMCell(3, 4))(x[0, 1]))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 6)
        self.lstm = nn.LSTM(6, 4, batch_first=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        x = torch.relu(self.embed(x))
        y, (h, c) = self.lstm(x)
        return self.head(torch.cat([y, h[-1].unsqueeze(1).expand_as(y)], -1))


with torch.no_grad():
    tagger = fill(Tagger())
    compiled = torch.compile(tagger, dynamic=True)
    print(compiled(ramp(2, 5, 3)))
    print(compiled(ramp(3, 7, 3, step=0.5)))
    print(tagger(ramp(3, 7, 3, step=0.5)))
