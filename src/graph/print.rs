//! The graph's one text form, shared by tests, the trace and the page.
//!
//! Input: a `Graph`. Output: FX-like lines, one per node:
//! `%linear = linear(%x, %layers_0_weight, %layers_0_bias) : f32[s0, 128]  # 18:16`.
//! Invariant: the text depends only on the graph (no addresses, no hash order).

use super::{AttentionMask, Graph, Op, Scalar, shape_to_string};
use std::fmt;

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self
            .inputs
            .iter()
            .map(|&id| {
                let node = self.node(id);
                format!(
                    "{}: {}{}",
                    node.name,
                    node.dtype.short(),
                    shape_to_string(&node.shape)
                )
            })
            .chain(
                self.int_inputs
                    .iter()
                    .filter(|(_, expr)| expr.as_int().is_none())
                    .map(|(name, expr)| format!("{name}: Sym({expr})")),
            )
            .collect();
        writeln!(f, "graph({}):", params.join(", "))?;
        for node in &self.nodes {
            let args: Vec<String> = node
                .inputs
                .iter()
                .map(|&id| format!("%{}", self.node(id).name))
                .collect();
            let call = match &node.op {
                Op::Input { name } => format!("input {name}"),
                Op::Param { path, .. } => format!("param {path}"),
                Op::Constant { name, .. } => format!("constant {name}"),
                Op::Output => {
                    writeln!(f, "  return ({})", args.join(", "))?;
                    continue;
                }
                op => format!("{}({}{})", op.name(), args.join(", "), attributes(op)),
            };
            write!(
                f,
                "  %{} = {} : {}{}",
                node.name,
                call,
                node.dtype.short(),
                shape_to_string(&node.shape)
            )?;
            if let Some(span) = node.span {
                write!(f, "  # {}:{}", span.line, span.col)?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// The op's non-tensor arguments as `, key=value` pairs.
fn attributes(op: &Op) -> String {
    let list = |values: &[i64]| {
        let items: Vec<String> = values.iter().map(i64::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    match op {
        Op::Conv {
            stride,
            padding,
            dilation,
            groups,
        } => {
            let groups = if *groups == 1 {
                String::new()
            } else {
                format!(", groups={groups}")
            };
            format!(
                ", stride={}, padding={}, dilation={}{groups}",
                list(stride),
                list(padding),
                list(dilation)
            )
        }
        Op::ConvTranspose {
            stride,
            padding,
            output_padding,
            dilation,
            groups,
        } => format!(
            ", stride={}, padding={}, output_padding={}, dilation={}, groups={groups}",
            list(stride),
            list(padding),
            list(output_padding),
            list(dilation)
        ),
        Op::BatchNorm { eps } => format!(", eps={eps}"),
        Op::LayerNorm {
            normalized_dims,
            eps,
        } => format!(", dims={normalized_dims}, eps={eps}"),
        Op::Pool {
            kernel,
            stride,
            padding,
            ..
        } => format!(
            ", kernel={}, stride={}, padding={}",
            list(kernel),
            list(stride),
            list(padding)
        ),
        Op::Scalar {
            scalar,
            tensor_on_left,
            ..
        } => {
            let scalar = match scalar {
                Scalar::Number(value) => format!("{value}"),
                Scalar::Size(expr) => expr.to_string(),
            };
            if *tensor_on_left {
                format!(", {scalar}")
            } else {
                format!(", {scalar}, reversed")
            }
        }
        Op::Softmax { dim } | Op::LogSoftmax { dim } => format!(", dim={dim}"),
        Op::Attention {
            causal,
            scale,
            mask,
        } => {
            let mut args = String::new();
            if *mask != AttentionMask::None {
                args.push_str(", attn_mask");
            }
            if *causal {
                args.push_str(", is_causal=True");
            }
            if let Some(scale) = scale {
                args.push_str(&format!(", scale={scale}"));
            }
            args
        }
        Op::Reduce { dims, keepdim, .. } => {
            let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!(
                ", dims=[{}], keepdim={}",
                dims.join(", "),
                if *keepdim { "True" } else { "False" }
            )
        }
        Op::Permute { perm } => {
            let perm: Vec<String> = perm.iter().map(usize::to_string).collect();
            format!(", [{}]", perm.join(", "))
        }
        Op::Slice { dim, start, step } => format!(", dim={dim}, start={start}, step={step}"),
        Op::Pad {
            dim,
            before,
            after,
            value,
        } if *value == 0.0 => format!(", dim={dim}, pad=[{before}, {after}]"),
        Op::Pad {
            dim,
            before,
            after,
            value,
        } => format!(", dim={dim}, pad=[{before}, {after}], value={value}"),
        Op::UpsampleLinear { dim, align_corners } => format!(
            ", dim={dim}, align_corners={}",
            if *align_corners { "True" } else { "False" }
        ),
        Op::UpsampleNearest { dim } => format!(", dim={dim}"),
        Op::Select { dim, index } => format!(", dim={dim}, index={index}"),
        Op::Cat { dim } => format!(", dim={dim}"),
        _ => String::new(),
    }
}
