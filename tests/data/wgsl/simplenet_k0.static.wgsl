// k0_linear_relu: linear + relu (static sizes)

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> p_layers_0_weight: array<f32>;
@group(0) @binding(2) var<storage, read> p_layers_0_bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> t0: array<f32>;

const WORKGROUPS: i32 = 4i;
const BATCH: i32 = 1i;
const M: i32 = 8i;
const N: i32 = 128i;
const K: i32 = 64i;

var<workgroup> tile_a: array<f32, 512>; // 32 rows x 16
var<workgroup> tile_b: array<f32, 512>; // 16 x 32 columns

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let wg = i32(wid.x + wid.y * nwg.x);
    let tiles_n = (N + 31i) / 32i;
    let tiles = ((M + 31i) / 32i) * tiles_n;
    let bat = wg / tiles;
    let row0 = ((wg % tiles) / tiles_n) * 32i;
    let col0 = (wg % tiles_n) * 32i;
    let ty = i32(lid) / 8i;
    let tx = i32(lid) % 8i;
    var acc: array<vec4<f32>, 4>;
    for (var k0 = 0i; k0 < K; k0 += 16i) {
        for (var l = 0i; l < 8i; l++) {
            let e = l * 64i + i32(lid);
            {
                let row = row0 + e / 16i;
                let kk = k0 + e % 16i;
                var v = 0.0f;
                if (row < M) {
                    v = in0[64i * row + kk];
                }
                tile_a[e] = v;
            }
            {
                let kk = k0 + e / 32i;
                let col = col0 + e % 32i;
                tile_b[e] = p_layers_0_weight[64i * col + kk];
            }
        }
        workgroupBarrier();
        for (var p = 0i; p < 16i; p++) {
            let b = vec4<f32>(
                tile_b[p * 32i + tx * 4i],
                tile_b[p * 32i + tx * 4i + 1i],
                tile_b[p * 32i + tx * 4i + 2i],
                tile_b[p * 32i + tx * 4i + 3i],
            );
            for (var r = 0i; r < 4i; r++) {
                acc[r] += tile_a[(ty * 4i + r) * 16i + p] * b;
            }
        }
        workgroupBarrier();
    }
    for (var r = 0i; r < 4i; r++) {
        let row = row0 + ty * 4i + r;
        for (var c = 0i; c < 4i; c++) {
            let col = col0 + tx * 4i + c;
            let sum = acc[r][c];
            if (row < M) {
                t0[128i * row + col] = max((sum + p_layers_0_bias[col]), 0.0f);
            }
        }
    }
}
