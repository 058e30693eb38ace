// k0_linear_relu: linear + relu (immediate sizes)

struct Dims {
    s0: i32,
}

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> p_layers_0_weight: array<f32>;
@group(0) @binding(2) var<storage, read> p_layers_0_bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> t0: array<f32>;
var<immediate> dims: Dims;

// Both tiles are stored k-major as vec4s: tile_a[p * 8 + i] holds rows 4i..4i+3 of
// column p of the A tile, tile_b[p * 8 + j] columns 4j..4j+3 of row p of the B tile.
var<workgroup> tile_a: array<vec4<f32>, 256>;
var<workgroup> tile_b: array<vec4<f32>, 256>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let WORKGROUPS = 4i * ((dims.s0 + 31i) / 32i);
    let wg = i32(wid.x + wid.y * nwg.x);
    if (wg >= WORKGROUPS) {
        return;
    }
    let BATCH = 1i;
    let M = dims.s0;
    let N = 128i;
    let K = 64i;
    let tiles_n = (N + 31i) / 32i;
    let tiles = ((M + 31i) / 32i) * tiles_n;
    let bat = wg / tiles;
    let row0 = ((wg % tiles) / tiles_n) * 32i;
    let col0 = (wg % tiles_n) * 32i;
    let ty = i32(lid) / 8i;
    let tx = i32(lid) % 8i;
    var acc0 = vec4<f32>();
    var acc1 = vec4<f32>();
    var acc2 = vec4<f32>();
    var acc3 = vec4<f32>();
    for (var k0 = 0i; k0 < K; k0 += 32i) {
        for (var l = 0i; l < 16i; l++) {
            let e = l * 64i + i32(lid);
            {
                let r = e / 32i;
                let p = e % 32i;
                let row = row0 + r;
                let kk = k0 + p;
                var v = 0.0f;
                if (row < M && kk < K) {
                    v = in0[64i * row + kk];
                }
                tile_a[p * 8i + r / 4i][r % 4i] = v;
            }
            {
                let p = e / 32i;
                let c = e % 32i;
                let kk = k0 + p;
                let col = col0 + c;
                var v = 0.0f;
                if (kk < K && col < N) {
                    v = p_layers_0_weight[64i * col + kk];
                }
                tile_b[p * 8i + c / 4i][c % 4i] = v;
            }
        }
        workgroupBarrier();
        for (var p = 0i; p < 32i; p++) {
            let a = tile_a[p * 8i + ty];
            let b = tile_b[p * 8i + tx];
            acc0 += a.x * b;
            acc1 += a.y * b;
            acc2 += a.z * b;
            acc3 += a.w * b;
        }
        workgroupBarrier();
    }
    let acc = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var r = 0i; r < 4i; r++) {
        let row = row0 + ty * 4i + r;
        for (var c = 0i; c < 4i; c++) {
            let col = col0 + tx * 4i + c;
            let sum = acc[r][c];
            if (row < M && col < N) {
                t0[128i * row + col] = max((sum + p_layers_0_bias[col]), 0.0f);
            }
        }
    }
}
