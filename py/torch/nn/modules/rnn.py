"""nn.RNN, nn.GRU, nn.LSTM and their cells, over linear, tanh, sigmoid and stack.

The parameters are PyTorch's, in its order and with its names (`weight_ih_l0`,
`weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, then `_reverse` for the second direction, per
layer), each uniform in +-1/sqrt(hidden_size). A recurrent layer computes the input half of
every step at once (one linear over the whole sequence) and the hidden half step by step.

Called inside a compiled `forward`, RNN, GRU and LSTM are a graph break, as Dynamo's default
`allow_rnn=False` makes them: `__call__` hands the call to `_tailor.call_break`, which ends
the graph before it, runs the module eagerly on the values there and makes what it returned
the resume function's inputs (`___stack0`). Elsewhere the call just runs. The cells are
traced like any layer, as Dynamo traces them.
"""

import _tailor
import torch
from torch.nn import functional as F
from torch.nn.modules import Module

# The gates of one step, per mode: their count sizes the weights (`gates * hidden_size` rows).
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _parameter(module, name, shape):
    setattr(module, name, _tailor.parameter(shape, "uniform", module.hidden_size))


def _rnn_step(mode, x_part, h, w_hh, b_hh):
    """One step of an RNN, RNN cell or GRU: `x_part` is the input's linear, already biased."""
    h_part = F.linear(h, w_hh, b_hh)
    if mode == "RNN_TANH":
        return torch.tanh(x_part + h_part)
    if mode == "RNN_RELU":
        return F.relu(x_part + h_part)
    x_r, x_z, x_n = x_part.chunk(3, -1)
    h_r, h_z, h_n = h_part.chunk(3, -1)
    r = torch.sigmoid(x_r + h_r)
    z = torch.sigmoid(x_z + h_z)
    n = torch.tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


def _lstm_step(x_part, h, c, w_hh, b_hh):
    gates = x_part + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if proj_size != 0:
            raise ValueError(
                f"proj_size={proj_size}: Tailor's nn.LSTM has no projection; "
                "project the output with an nn.Linear instead")
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability "
                "of an element being zeroed")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gates = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for suffix in ["", "_reverse"][:directions]:
                _parameter(self, f"weight_ih_l{layer}{suffix}", [gates, layer_input])
                _parameter(self, f"weight_hh_l{layer}{suffix}", [gates, hidden_size])
                if bias:
                    _parameter(self, f"bias_ih_l{layer}{suffix}", [gates])
                    _parameter(self, f"bias_hh_l{layer}{suffix}", [gates])

    def __call__(self, *args, **kwargs):
        return _tailor.call_break(self, self.forward, list(args), kwargs)

    def flatten_parameters(self):
        pass

    def _weights(self, layer, suffix):
        def get(name):
            return getattr(self, f"{name}_l{layer}{suffix}") if self.bias or "weight" in name else None
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _states(self, input, hx):
        """The initial hidden (and cell) states, `(layers * directions, batch, hidden)`."""
        directions = 2 if self.bidirectional else 1
        shape = [self.num_layers * directions, input.shape[1], self.hidden_size]
        zeros = torch.zeros(shape, dtype=input.dtype)
        if self.mode == "LSTM":
            return (zeros, zeros) if hx is None else hx
        return zeros if hx is None else hx

    def forward(self, input, hx=None):
        unbatched = input.dim() == 2
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if self.mode == "LSTM" else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        states = self._states(input, hx)
        lstm = self.mode == "LSTM"
        h0, c0 = states if lstm else (states, None)
        directions = 2 if self.bidirectional else 1
        steps = input.shape[0]
        x = input
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout and self.training:
                x = F.dropout(x, self.dropout, True)
            outputs = []
            for direction, suffix in enumerate(["", "_reverse"][:directions]):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, suffix)
                x_parts = F.linear(x, w_ih, b_ih)
                index = layer * directions + direction
                h = h0[index]
                c = c0[index] if lstm else None
                order = range(steps - 1, -1, -1) if direction else range(steps)
                ys = [None] * steps
                for t in order:
                    if lstm:
                        h, c = _lstm_step(x_parts[t], h, c, w_hh, b_hh)
                    else:
                        h = _rnn_step(self.mode, x_parts[t], h, w_hh, b_hh)
                    ys[t] = h
                outputs.append(torch.stack(ys, 0))
                last_h.append(h)
                last_c.append(c)
            x = outputs[0] if directions == 1 else torch.cat(outputs, -1)
        h_n = torch.stack(last_h, 0)
        output = x
        if unbatched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        if not lstm:
            return output, h_n
        c_n = torch.stack(last_c, 0)
        return output, (h_n, c_n.squeeze(1) if unbatched else c_n)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


class RNN(RNNBase):
    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, mode, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = _GATES[mode] * hidden_size
        _parameter(self, "weight_ih", [gates, input_size])
        _parameter(self, "weight_hh", [gates, hidden_size])
        if bias:
            _parameter(self, "bias_ih", [gates])
            _parameter(self, "bias_hh", [gates])
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def forward(self, input, hx=None):
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        zeros = torch.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
        if self.mode == "LSTM":
            h, c = (zeros, zeros) if hx is None else hx
            if unbatched and hx is not None:
                h, c = h.unsqueeze(0), c.unsqueeze(0)
            x_part = F.linear(input, self.weight_ih, self.bias_ih)
            h, c = _lstm_step(x_part, h, c, self.weight_hh, self.bias_hh)
            return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)
        h = zeros if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        x_part = F.linear(input, self.weight_ih, self.bias_ih)
        h = _rnn_step(self.mode, x_part, h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, bias)
        self.nonlinearity = nonlinearity


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias)
