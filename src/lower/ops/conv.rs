//! Convolution kernels: a convolution as one matrix product (an implicit im2col), with a
//! following BatchNorm folded into its weights and bias when every value involved is known.
//!
//! In: a group rooted at a convolution. Out: one `Body::Gemm` kernel whose batch is the
//! channel groups, rows output positions, columns a group's output channels, and reduction
//! a group's input channels × window taps.
//! Invariant: padding is a mask on the input load, never a padded copy; folded parameters
//! get their own buffers and the originals are not read.

use crate::graph::{NodeId, Op};
use crate::lower::LowerError;
use crate::lower::builder::{Builder, sanitize};
use crate::lower::fuse::Group;
use crate::lower::index::{Index, numel, unravel};
use crate::lower::kernel::{Bound, BufferId, Load, Role, Value};
use crate::lower::ops::gemm::acc_plus;
use crate::symbolic::Expr;
use std::sync::Arc;

impl Builder<'_> {
    /// Convolution as one product per channel group: rows are output positions, columns
    /// the group's output channels, and the reduction runs over the group's input channels
    /// × window (an implicit im2col).
    pub(super) fn build_conv(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let Op::Conv {
            stride,
            padding,
            dilation,
            groups,
        } = &root.op
        else {
            unreachable!("build_conv is called for convolutions")
        };
        let (x, weight) = (root.inputs[0], root.inputs[1]);
        self.begin_kernel();
        let x_shape = self.shape(x);
        let w_shape = self.shape(weight);
        let out_shape = self.shape(root.id);
        let out_sizes = out_shape[2..].to_vec();
        let window = w_shape[2..].to_vec();
        // Per group: `group_in` input channels in, `group_out` output channels out.
        let (group_in, out_channels) = (w_shape[1].clone(), w_shape[0].clone());
        let group_out = out_channels.floor_div(&Expr::int(*groups));
        let points = numel(&out_sizes);
        let window_points = numel(&window);
        let m = &x_shape[0] * &points;
        let k = &group_in * &window_points;
        let batch = Expr::int(*groups);
        self.set_extents(&[batch.clone(), m.clone(), group_out.clone(), k.clone()]);
        let (channel_group, row, col, kk) = (self.var(0), self.var(1), self.var(2), self.var(3));
        let batch_idx = row.floor_div(&points);
        let point = row.modulo(&points);
        let out_pos = unravel(&point, &out_sizes);
        let channel = &channel_group * &group_in + kk.floor_div(&window_points);
        let out_channel = self.simplify(&(&channel_group * &group_out + &col));
        let tap = unravel(&kk.modulo(&window_points), &window);
        let mut x_multi = vec![batch_idx.clone(), channel];
        let mut mask = Vec::new();
        for d in 0..stride.len() {
            let pos = &out_pos[d] * stride[d] - padding[d] + &tap[d] * dilation[d];
            if padding[d] > 0 {
                mask.push(Bound {
                    expr: pos.clone(),
                    limit: x_shape[2 + d].clone(),
                });
            }
            x_multi.push(pos);
        }
        let a = self.load_masked(x, &Index::multi(&x_shape, x_multi), mask)?;
        let (w_buffer, bias) = self.conv_params(group, &out_channel)?;
        let b = Value::Load(Load {
            buffer: w_buffer,
            offset_elems: self.simplify(&(&out_channel * &k + &kk)),
            mask: Vec::new(),
        });
        let mut out_multi = vec![batch_idx.clone(), out_channel.clone()];
        out_multi.extend(out_pos);
        let flat = (&batch_idx * &out_channels + &out_channel) * &points + &point;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let acc = acc_plus(bias);
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&flat);
        self.finish_gemm(group, batch, m, group_out, k, a, b, epilogue, store, true);
        Ok(())
    }

    /// Transposed convolution in its gather form, one product per channel group: output
    /// position `y` reads input position `(y + padding - t * dilation) / stride` for tap `t`
    /// where that division is exact and lands inside the input (a mask on the load).
    pub(super) fn build_conv_transpose(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let Op::ConvTranspose {
            stride,
            padding,
            dilation,
            groups,
            ..
        } = &root.op
        else {
            unreachable!("build_conv_transpose is called for transposed convolutions")
        };
        let (x, weight, bias) = (root.inputs[0], root.inputs[1], root.inputs.get(2).copied());
        self.begin_kernel();
        let x_shape = self.shape(x);
        let w_shape = self.shape(weight);
        let out_shape = self.shape(root.id);
        let out_sizes = out_shape[2..].to_vec();
        let window = w_shape[2..].to_vec();
        let group_out = w_shape[1].clone();
        let group_in = x_shape[1].floor_div(&Expr::int(*groups));
        let out_channels = out_shape[1].clone();
        let points = numel(&out_sizes);
        let window_points = numel(&window);
        let m = &x_shape[0] * &points;
        let k = &group_in * &window_points;
        let batch = Expr::int(*groups);
        self.set_extents(&[batch.clone(), m.clone(), group_out.clone(), k.clone()]);
        let (channel_group, row, col, kk) = (self.var(0), self.var(1), self.var(2), self.var(3));
        let batch_idx = row.floor_div(&points);
        let point = row.modulo(&points);
        let out_pos = unravel(&point, &out_sizes);
        let channel = self.simplify(&(&channel_group * &group_in + kk.floor_div(&window_points)));
        let tap_flat = kk.modulo(&window_points);
        let tap = unravel(&tap_flat, &window);
        let mut x_multi = vec![batch_idx.clone(), channel.clone()];
        let mut mask = Vec::new();
        for d in 0..stride.len() {
            let reach = &out_pos[d] + padding[d] - &tap[d] * dilation[d];
            let pos = reach.floor_div(&Expr::int(stride[d]));
            if stride[d] > 1 {
                mask.push(Bound {
                    expr: reach.modulo(&Expr::int(stride[d])),
                    limit: Expr::int(1),
                });
            }
            mask.push(Bound {
                expr: pos.clone(),
                limit: x_shape[2 + d].clone(),
            });
            x_multi.push(pos);
        }
        let a = self.load_masked(x, &Index::multi(&x_shape, x_multi), mask)?;
        let out_channel = self.simplify(&(&channel_group * &group_out + &col));
        let w_buffer = self.weight_buffer(weight)?;
        let b = Value::Load(Load {
            buffer: w_buffer,
            offset_elems: self
                .simplify(&((&channel * &group_out + &col) * &window_points + &tap_flat)),
            mask: Vec::new(),
        });
        let mut out_multi = vec![batch_idx.clone(), out_channel.clone()];
        out_multi.extend(out_pos);
        let flat = (&batch_idx * &out_channels + &out_channel) * &points + &point;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let acc = self.plus_bias(bias, &out_channel)?;
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&flat);
        self.finish_gemm(group, batch, m, group_out, k, a, b, epilogue, store, true);
        Ok(())
    }

    /// The weight buffer of a convolution and its bias at `out_channel`, with a folded
    /// BatchNorm applied.
    fn conv_params(
        &mut self,
        group: &Group,
        out_channel: &Expr,
    ) -> Result<(BufferId, Option<Value>), LowerError> {
        let root = self.graph.node(group.root());
        let (weight, bias) = (root.inputs[1], root.inputs.get(2).copied());
        let Some(bn) = group.folded else {
            let w = self.weight_buffer(weight)?;
            let b = match bias {
                Some(b) => {
                    let shape = self.shape(b);
                    Some(self.load(b, &Index::multi(&shape, vec![out_channel.clone()]))?)
                }
                None => None,
            };
            return Ok((w, b));
        };
        let bn_node = self.graph.node(bn);
        let Op::BatchNorm { eps } = bn_node.op else {
            unreachable!("folded nodes are batch norms")
        };
        let [mean, var, gamma, beta] = [1, 2, 3, 4].map(|i| bn_node.inputs[i]);
        let w = self.param_values(weight)?;
        let out_channels = self.param_values(mean)?.len();
        let b = match bias {
            Some(b) => self.param_values(b)?,
            None => vec![0.0; out_channels].into(),
        };
        let (mean, var, gamma, beta) = (
            self.param_values(mean)?,
            self.param_values(var)?,
            self.param_values(gamma)?,
            self.param_values(beta)?,
        );
        let scale: Vec<f32> = (0..out_channels)
            .map(|c| gamma[c] / (var[c] + eps as f32).sqrt())
            .collect();
        let per_channel = w.len() / out_channels.max(1);
        let folded_w: Arc<[f32]> = w
            .iter()
            .enumerate()
            .map(|(i, v)| v * scale[i / per_channel.max(1)])
            .collect();
        let folded_b: Arc<[f32]> = (0..out_channels)
            .map(|c| (b[c] - mean[c]) * scale[c] + beta[c])
            .collect();
        let conv_name = sanitize(&root.name);
        let w_len = Expr::int(folded_w.len() as i64);
        let w_id = self.add_buffer(
            format!("p_{conv_name}_weight_bn"),
            Role::Param(folded_w),
            w_len,
        );
        let b_id = self.add_buffer(
            format!("p_{conv_name}_bias_bn"),
            Role::Param(folded_b),
            Expr::int(out_channels as i64),
        );
        self.notes.push(format!(
            "folded {} into the weights and bias of {}",
            bn_node.name, root.name
        ));
        let b = Value::Load(Load {
            buffer: b_id,
            offset_elems: out_channel.clone(),
            mask: Vec::new(),
        });
        Ok((w_id, Some(b)))
    }

    /// Whether `node` is held in a buffer of its own, element after element: state, an
    /// input, or what an earlier kernel stored.
    fn is_contiguous_buffer(&self, node: NodeId) -> bool {
        matches!(
            self.graph.node(node).op,
            Op::Param { .. } | Op::Constant { .. } | Op::Input { .. }
        ) || self.stored[node.index()].is_some()
    }

    /// The buffer of the weights: stored state, or a tensor an earlier kernel computed
    /// (weight normalisation's `v * g / ‖v‖`), which the kernel reads as stored.
    fn weight_buffer(&mut self, weight: NodeId) -> Result<BufferId, LowerError> {
        let node = self.graph.node(weight);
        match node.op {
            Op::Param { .. } | Op::Constant { .. } | Op::Input { .. } => self.leaf_buffer(weight),
            // A reshape of a stored tensor (a buffer is contiguous) keeps its elements in
            // order: the weights are its input's (the denoiser's resampling kernel).
            Op::Reshape if self.is_contiguous_buffer(node.inputs[0]) => {
                self.weight_buffer(node.inputs[0])
            }
            _ => self.stored[weight.index()].ok_or_else(|| {
                self.node_error(
                    weight,
                    "convolution weights must be computed by an earlier kernel",
                )
            }),
        }
    }
}
