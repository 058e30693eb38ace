// k1_linear_1: linear_1 (static sizes)

@group(0) @binding(0) var<storage, read> p_layers_2_weight: array<f32>;
@group(0) @binding(1) var<storage, read> p_layers_2_bias: array<f32>;
@group(0) @binding(2) var<storage, read> t0: array<f32>;
@group(0) @binding(3) var<storage, read_write> out0: array<f32>;

const WORKGROUPS: i32 = 1i;
const BATCH: i32 = 1i;
const M: i32 = 8i;
const N: i32 = 64i;
const K: i32 = 128i;

// Both tiles are stored k-major as vec4s: tile_a[p * 16 + i] holds rows 4i..4i+3 of
// column p of the A tile, tile_b[p * 16 + j] columns 4j..4j+3 of row p of the B tile.
var<workgroup> tile_a: array<vec4<f32>, 256>;
var<workgroup> tile_b: array<vec4<f32>, 256>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = i32(wid.x + wid.y * nwg.x);
    let tiles_n = (N + 63i) / 64i;
    let tiles = ((M + 63i) / 64i) * tiles_n;
    let bat = wg / tiles;
    let row0 = ((wg % tiles) / tiles_n) * 64i;
    let col0 = (wg % tiles_n) * 64i;
    let ty = i32(lid) / 8i;
    let tx = i32(lid) % 8i;
    var acc0 = vec4<f32>();
    var acc1 = vec4<f32>();
    var acc2 = vec4<f32>();
    var acc3 = vec4<f32>();
    var acc4 = vec4<f32>();
    var acc5 = vec4<f32>();
    var acc6 = vec4<f32>();
    var acc7 = vec4<f32>();
    var acc8 = vec4<f32>();
    var acc9 = vec4<f32>();
    var acc10 = vec4<f32>();
    var acc11 = vec4<f32>();
    var acc12 = vec4<f32>();
    var acc13 = vec4<f32>();
    var acc14 = vec4<f32>();
    var acc15 = vec4<f32>();
    for (var k0 = 0i; k0 < K; k0 += 16i) {
        for (var l = 0i; l < 16i; l++) {
            let e = l * 64i + i32(lid);
            let r = e / 16i;
            let p = e % 16i;
            let row = row0 + r;
            let kk = k0 + p;
            var v = 0.0f;
            if (row < M) {
                v = t0[128i * row + kk];
            }
            tile_a[p * 16i + r / 4i][r % 4i] = v;
        }
        for (var l = 0i; l < 16i; l++) {
            let e = l * 64i + i32(lid);
            let p = e / 64i;
            let c = e % 64i;
            let kk = k0 + p;
            let col = col0 + c;
            tile_b[p * 16i + c / 4i][c % 4i] = p_layers_2_weight[128i * col + kk];
        }
        workgroupBarrier();
        for (var p = 0i; p < 16i; p++) {
            let a0 = tile_a[p * 16i + ty * 2i];
            let a1 = tile_a[p * 16i + ty * 2i + 1i];
            let b0 = tile_b[p * 16i + tx * 2i];
            let b1 = tile_b[p * 16i + tx * 2i + 1i];
            acc0 += a0.x * b0;
            acc1 += a0.x * b1;
            acc2 += a0.y * b0;
            acc3 += a0.y * b1;
            acc4 += a0.z * b0;
            acc5 += a0.z * b1;
            acc6 += a0.w * b0;
            acc7 += a0.w * b1;
            acc8 += a1.x * b0;
            acc9 += a1.x * b1;
            acc10 += a1.y * b0;
            acc11 += a1.y * b1;
            acc12 += a1.z * b0;
            acc13 += a1.z * b1;
            acc14 += a1.w * b0;
            acc15 += a1.w * b1;
        }
        workgroupBarrier();
    }
    let acc = array<vec4<f32>, 16>(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7, acc8, acc9, acc10, acc11, acc12, acc13, acc14, acc15);
    for (var r = 0i; r < 8i; r++) {
        let row = row0 + ty * 8i + r;
        for (var c = 0i; c < 8i; c++) {
            let col = col0 + tx * 8i + c;
            let sum = acc[r * 2i + c / 4i][c % 4i];
            if (row < M) {
                out0[64i * row + col] = (sum + p_layers_2_bias[col]);
            }
        }
    }
}
