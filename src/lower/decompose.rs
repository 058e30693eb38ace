//! Lowering's first step: ops that Dynamo's graph keeps as one node but the kernels compute
//! as several (`scaled_dot_product_attention`) are rewritten into the ops they stand for.
//!
//! In: a captured graph. Out: the graph with each such node replaced by its ops, and for
//! every node of the result the captured node it computes (its own, or the one it was
//! rewritten from), so that kernels are named by the graph a learner sees. Invariant: the
//! result's inputs, parameters, lifted tensors and outputs are the captured graph's, in the
//! same order, and every node of the captured graph keeps its name; a graph without such
//! nodes is not rewritten at all (`None`).

use crate::graph::{
    AttentionMask, BinaryOp, DType, Graph, Lifted, Node, NodeId, Op, Scalar, Shape, UnaryOp,
};
use crate::symbolic::Expr;

/// A graph rewritten for lowering.
pub(super) struct Decomposed {
    /// The rewritten graph.
    pub graph: Graph,
    /// Per node of `graph`, the node of the captured graph it computes.
    pub origin: Vec<NodeId>,
    /// What was rewritten, for the schedule's notes.
    pub notes: Vec<String>,
}

/// `graph` with its attention nodes rewritten, or `None` when it has none.
pub(super) fn decompose(graph: &Graph) -> Option<Decomposed> {
    if !graph
        .nodes
        .iter()
        .any(|node| matches!(node.op, Op::Attention { .. }))
    {
        return None;
    }
    let mut rewritten = Rewriter {
        graph: Graph::default(),
        origin: Vec::new(),
        current: NodeId(0),
    };
    let mut notes = Vec::new();
    let mut map = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let inputs: Vec<NodeId> = node.inputs.iter().map(|i| map[i.index()]).collect();
        rewritten.current = node.id;
        let id = match &node.op {
            Op::Attention {
                causal,
                scale,
                mask,
            } => {
                notes.push(format!(
                    "{} lowered as its ops: q @ kᵀ, the scale{}, softmax over the keys, @ v",
                    node.name,
                    match (causal, mask) {
                        (true, _) => ", the causal mask",
                        (_, AttentionMask::Keep) => ", the bool mask",
                        (_, AttentionMask::Add) => ", the added mask",
                        _ => "",
                    }
                ));
                let operands = [0, 1].map(|i| graph.shape(node.inputs[i]).clone());
                rewritten.attention(node, &inputs, &operands, *causal, *scale, *mask)
            }
            op => rewritten.push(
                &node.name,
                op.clone(),
                inputs,
                node.shape.clone(),
                node.dtype,
            ),
        };
        map.push(id);
    }
    let Rewriter {
        graph: mut out,
        origin,
        ..
    } = rewritten;
    out.int_inputs = graph.int_inputs.clone();
    out.returned = graph.returned.clone();
    out.lifted = graph
        .lifted
        .iter()
        .map(|lifted| Lifted {
            node: map[lifted.node.index()],
            ..lifted.clone()
        })
        .collect();
    Some(Decomposed {
        graph: out,
        origin,
        notes,
    })
}

/// The graph being built, and the captured node whose ops are being pushed.
struct Rewriter {
    graph: Graph,
    origin: Vec<NodeId>,
    current: NodeId,
}

impl Rewriter {
    fn push(
        &mut self,
        name: &str,
        op: Op,
        inputs: Vec<NodeId>,
        shape: Shape,
        dtype: DType,
    ) -> NodeId {
        self.origin.push(self.current);
        self.graph.push_typed(name, op, inputs, shape, None, dtype)
    }

    /// `softmax(q @ kᵀ · scale + mask) @ v` for `node`, whose operands (already rewritten)
    /// are `inputs`, q and k of shapes `[q, k]`; the last op is named as `node`.
    fn attention(
        &mut self,
        node: &Node,
        inputs: &[NodeId],
        [q, k]: &[Shape; 2],
        causal: bool,
        scale: Option<f64>,
        mask: AttentionMask,
    ) -> NodeId {
        let name = |part: &str| format!("{}_{part}", node.name);
        let float = DType::Float32;
        let rank = k.len();
        let mut perm: Vec<usize> = (0..rank).collect();
        perm.swap(rank - 2, rank - 1);
        let mut key_t = k.clone();
        key_t.swap(rank - 2, rank - 1);
        let key_t_id = self.push(
            &name("key_t"),
            Op::Permute { perm },
            vec![inputs[1]],
            key_t.clone(),
            float,
        );
        let queries = q[q.len() - 2].clone();
        let keys = k[rank - 2].clone();
        let mut scores_shape = broadcast(&q[..q.len() - 2], &key_t[..rank - 2]);
        scores_shape.extend([queries.clone(), keys.clone()]);
        let scores = self.push(
            &name("scores"),
            Op::Matmul,
            vec![inputs[0], key_t_id],
            scores_shape.clone(),
            float,
        );
        let scaled = self.scale(scores, &scores_shape, scale, &q[q.len() - 1], &name);
        let masked = if causal {
            let keep = self.causal_keep(&queries, &keys, &name);
            self.masked(keep, scaled, &scores_shape, &name)
        } else {
            match (mask, inputs.get(3)) {
                (AttentionMask::Keep, Some(&keep)) => {
                    self.masked(keep, scaled, &scores_shape, &name)
                }
                (AttentionMask::Add, Some(&bias)) => self.push(
                    &name("biased"),
                    Op::Binary(BinaryOp::Add),
                    vec![scaled, bias],
                    scores_shape.clone(),
                    float,
                ),
                _ => scaled,
            }
        };
        let last = scores_shape.len() - 1;
        let weights = self.push(
            &name("weights"),
            Op::Softmax { dim: last },
            vec![masked],
            scores_shape,
            float,
        );
        self.push(
            &node.name,
            Op::Matmul,
            vec![weights, inputs[2]],
            node.shape.clone(),
            float,
        )
    }

    /// `scores · scale`: the number given, else `1/sqrt(head)`, a number where the head
    /// size is known and a 0-d tensor computed from the size where it is a symbol.
    fn scale(
        &mut self,
        scores: NodeId,
        shape: &Shape,
        scale: Option<f64>,
        head: &Expr,
        name: &dyn Fn(&str) -> String,
    ) -> NodeId {
        let factor = match (scale, head.as_int()) {
            (Some(scale), _) => Some(scale),
            (None, Some(head)) => Some(1.0 / (head as f64).sqrt()),
            (None, None) => None,
        };
        if let Some(factor) = factor {
            return self.push(
                &name("scaled"),
                Op::Scalar {
                    op: BinaryOp::Mul,
                    scalar: Scalar::Number(factor),
                    tensor_on_left: true,
                },
                vec![scores],
                shape.clone(),
                DType::Float32,
            );
        }
        let one = self.push(
            &name("one"),
            Op::Full { value: 1.0 },
            Vec::new(),
            Vec::new(),
            DType::Float32,
        );
        let size = self.push(
            &name("head"),
            Op::Scalar {
                op: BinaryOp::Mul,
                scalar: Scalar::Size(head.clone()),
                tensor_on_left: true,
            },
            vec![one],
            Vec::new(),
            DType::Float32,
        );
        let root = self.push(
            &name("sqrt_head"),
            Op::Unary(UnaryOp::Sqrt),
            vec![size],
            Vec::new(),
            DType::Float32,
        );
        self.push(
            &name("scaled"),
            Op::Binary(BinaryOp::Div),
            vec![scores, root],
            shape.clone(),
            DType::Float32,
        )
    }

    /// The `[queries, keys]` bool matrix of `is_causal`: key `j` kept for query `i` where
    /// `j <= i` (PyTorch's `ones(L, S).tril()`).
    fn causal_keep(
        &mut self,
        queries: &Expr,
        keys: &Expr,
        name: &dyn Fn(&str) -> String,
    ) -> NodeId {
        let shape = vec![queries.clone(), keys.clone()];
        let ones = self.push(
            &name("ones"),
            Op::Full { value: 1.0 },
            Vec::new(),
            shape.clone(),
            DType::Float32,
        );
        let lower = self.push(
            &name("tril"),
            Op::Triangle {
                upper: false,
                diagonal: 0,
            },
            vec![ones],
            shape.clone(),
            DType::Float32,
        );
        self.push(
            &name("causal"),
            Op::Cast { to: DType::Bool },
            vec![lower],
            shape,
            DType::Bool,
        )
    }

    /// `scores` where `keep`, else `-inf`.
    fn masked(
        &mut self,
        keep: NodeId,
        scores: NodeId,
        shape: &Shape,
        name: &dyn Fn(&str) -> String,
    ) -> NodeId {
        let minus_inf = self.push(
            &name("minus_inf"),
            Op::Full {
                value: f64::NEG_INFINITY,
            },
            Vec::new(),
            Vec::new(),
            DType::Float32,
        );
        self.push(
            &name("masked"),
            Op::Where,
            vec![keep, scores, minus_inf],
            shape.clone(),
            DType::Float32,
        )
    }
}

/// Two batch shapes broadcast, the larger size where one is 1 (the shape rule has already
/// guarded that they agree).
fn broadcast(a: &[Expr], b: &[Expr]) -> Shape {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|d| {
            let at = |s: &[Expr]| (d + s.len()).checked_sub(rank).map(|i| s[i].clone());
            match (at(a), at(b)) {
                (Some(x), Some(y)) if x.as_int() == Some(1) => y,
                (Some(x), _) => x,
                (None, Some(y)) => y,
                (None, None) => Expr::int(1),
            }
        })
        .collect()
}
