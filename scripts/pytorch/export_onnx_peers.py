"""ONNX models of the workloads tests/e2e/bench-peers.mjs runs, for its onnxruntime-web peer.

Run from the repository root with the `onnx` package (PyTorch itself is not needed):

    /tmp/torch/bin/pip install onnx
    /tmp/torch/bin/python scripts/pytorch/export_onnx_peers.py

It writes tests/e2e/peers/models/ (ignored by git, like the peers' node_modules: the big
MLP alone is 8 MB of weights, and the files are rebuilt in a second from this script):

    simplenet_b8.onnx   Gemm 64->128, Relu, Gemm 128->64       (SimpleNet; fed at batch 8)
    bigmlp.onnx         Gemm 1024->1024, Relu, Gemm 1024->1024 (fed at batch 256)
    conv3to16_64.onnx   Conv 3->16, 3x3, padding 1             (fed 1x3x64x64)
    warm.onnx           y = x + 1: what the page pays once before the first model

The graphs are built with onnx.helper rather than torch.onnx.export, so that they do not
depend on the exporter's version and its choice of ops; each linear layer is one Gemm with
the weight stored [out, in] and transB=1, as PyTorch's exporter writes nn.Linear. The batch
dimension is symbolic ("batch"), as Tailor's dynamic=True entry is. Input `x`, output `y`.

The weights are the benchmark's own deterministic fill, `sin(i) * 0.1` in float32 over a
flat index, laid out as the page's other peers lay theirs out: a layer's weight is filled
[in, out] row-major (tfjs' and the naive WGSL's x @ W) and stored transposed, so the page
can check onnxruntime's output against the naive WGSL's for the same input; the conv's
weight is filled [out, in, 3, 3] (ONNX's layout), checked against a direct convolution in
the page.
"""

import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "e2e" / "peers" / "models"
# Opset 17: supported by every onnxruntime-web 1.x of the last years, and enough for
# Gemm, Relu, Conv and Add.
OPSET = 17


def filled(n):
    """The page's `filled(n)`: Math.sin(i) * 0.1 for i < n, rounded to float32."""
    return (np.sin(np.arange(n, dtype=np.float64)) * 0.1).astype(np.float32)


def model(name, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    made = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="tailor scripts/pytorch/export_onnx_peers.py",
    )
    # IR version 8 goes with opset 17; onnx's newest default may be ahead of what
    # onnxruntime-web reads.
    made.ir_version = 8
    onnx.checker.check_model(made, full_check=True)
    return made


def mlp(name, widths):
    """Gemm layers with a Relu between them: the page's `mlpSource(widths)`."""
    nodes, initializers = [], []
    x = "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        if i > 0:
            nodes.append(helper.make_node("Relu", [x], [f"relu{i}"]))
            x = f"relu{i}"
        weight = filled(k * n).reshape(k, n).T.copy()
        initializers += [
            numpy_helper.from_array(weight, f"fc{i}.weight"),
            numpy_helper.from_array(filled(n), f"fc{i}.bias"),
        ]
        y = "y" if i == len(widths) - 2 else f"fc{i}"
        nodes.append(helper.make_node("Gemm", [x, f"fc{i}.weight", f"fc{i}.bias"], [y], transB=1))
        x = y
    return model(
        name,
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", widths[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", widths[-1]])],
        initializers,
    )


def conv(name, in_c, out_c, size):
    weight = filled(out_c * in_c * 9).reshape(out_c, in_c, 3, 3)
    node = helper.make_node(
        "Conv", ["x", "conv.weight", "conv.bias"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]
    )
    return model(
        name,
        [node],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", in_c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", out_c, size, size])],
        [numpy_helper.from_array(weight, "conv.weight"), numpy_helper.from_array(filled(out_c), "conv.bias")],
    )


def warm():
    one = numpy_helper.from_array(np.ones([1], np.float32), "one")
    return model(
        "warm",
        [helper.make_node("Add", ["x", "one"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        [one],
    )


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    models = {
        "simplenet_b8": mlp("simplenet_b8", [64, 128, 64]),
        "bigmlp": mlp("bigmlp", [1024, 1024, 1024]),
        "conv3to16_64": conv("conv3to16_64", 3, 16, 64),
        "warm": warm(),
    }
    for name, made in models.items():
        path = OUT / f"{name}.onnx"
        onnx.save(made, path)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
