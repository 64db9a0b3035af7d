//! Real files: counts, degrees, and the first and last splat's values, read
//! independently with Python's `struct` module.

use bevy_splat::asset::SplatGeometry;

use super::load;

/// Values of one splat as stored in the file.
struct Spot {
    index: usize,
    position: [f32; 3],
    opacity: f32,
    rotation: [f32; 4],
    scale: [f32; 3],
    f_dc: [f32; 3],
    /// f_rest_0, 14, 15, 29, 30, 44 (first and last coefficient of R, G, B at degree 3).
    f_rest: Option<[f32; 6]>,
}

struct Expected {
    file: &'static str,
    count: usize,
    sh_degree: u8,
    spots: [Spot; 2],
}

const EXPECTED: [Expected; 7] = [
    Expected {
        file: "angel_sh0.ply",
        count: 71_377,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.787364, -1.6679311, -0.6272574],
                opacity: -2.2192035,
                rotation: [-0.09331321, 0.8836752, -0.04078133, -0.45688912],
                scale: [-6.9930305, -1.2533888, -3.1808116],
                f_dc: [1.6195363, 1.2163899, 1.3415043],
                f_rest: None,
            },
            Spot {
                index: 71376,
                position: [-0.580579, 1.2193758, 0.3159555],
                opacity: -1.3619623,
                rotation: [0.3158825, 0.9359345, 0.007603299, -0.15552202],
                scale: [-9.776312, -4.871577, -6.248548],
                f_dc: [0.9800627, 0.95225954, 0.85494834],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "fruit_drops_sh3.ply",
        count: 4_721,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [0.8868645, 0.17251483, -2.2489862],
                opacity: 1.2773573,
                rotation: [0.9165499, -0.30147138, 0.14749761, -0.03926655],
                scale: [-1.7639092, -2.7094355, -5.63348],
                f_dc: [1.6967978, 1.5846435, 1.4313878],
                f_rest: Some([
                    0.041336432,
                    0.0129960785,
                    0.017489886,
                    0.049454067,
                    -0.025654165,
                    0.099147394,
                ]),
            },
            Spot {
                index: 4720,
                position: [0.93882257, 0.070303984, -2.025317],
                opacity: -3.2840593,
                rotation: [0.67903566, 0.28031445, -0.061129052, 0.19633473],
                scale: [-4.0471992, -3.6608512, -5.0752816],
                f_dc: [1.0077044, 0.78262055, 0.43541318],
                f_rest: Some([
                    -0.025908576,
                    0.13547207,
                    0.068102166,
                    0.02744446,
                    0.10719957,
                    -0.05466433,
                ]),
            },
        ],
    },
    Expected {
        file: "train_3pts_sh3.ply",
        count: 3,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [2.0078542, 0.08104886, 1.3285047],
                opacity: 0.84990764,
                rotation: [1.0344028, -0.19919053, -0.10477345, -0.014542822],
                scale: [-3.8865843, -5.659209, -4.7688828],
                f_dc: [1.1078603, 0.76136017, 0.06554606],
                f_rest: Some([
                    -0.0057055317,
                    -0.016852863,
                    0.006827223,
                    0.011458171,
                    0.024590509,
                    0.028849693,
                ]),
            },
            Spot {
                index: 2,
                position: [-2.7480826, -1.0123506, -1.3970541],
                opacity: -1.8340071,
                rotation: [0.5267736, -0.1882949, -0.43221036, -0.03793568],
                scale: [-5.6808167, -4.8350945, -3.1652412],
                f_dc: [0.0023806388, 0.4387073, -0.36169815],
                f_rest: Some([
                    0.013920748,
                    -0.006754283,
                    0.040439546,
                    0.002646055,
                    0.008141398,
                    -0.021842895,
                ]),
            },
        ],
    },
    Expected {
        file: "degenerate_lod_tile_sh3.ply",
        count: 14_051,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [0.08374715, 2.9444208, 1.772595],
                opacity: 3.472221,
                rotation: [1.3402297, 0.7455077, 0.03655842, 0.6321642],
                scale: [-2.9916525, -2.663227, -14.177204],
                f_dc: [-0.83693206, -0.7823149, -1.4006985],
                f_rest: Some([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            },
            Spot {
                index: 14050,
                position: [3.4255412, 3.7725239, 1.8126929],
                opacity: -1.5065289,
                rotation: [-0.22597708, 1.0007694, 0.7197584, 0.24325961],
                scale: [-3.4579563, -4.6361933, -12.703611],
                f_dc: [1.8122933, 2.3167915, 1.4308033],
                f_rest: Some([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            },
        ],
    },
    Expected {
        file: "guitar_sh0.ply",
        count: 74_000,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [-0.47249085, -4.0782046, -0.1663459],
                opacity: 0.7646061,
                rotation: [0.79510754, 0.57715946, -0.046311002, -0.18040554],
                scale: [-8.798642, -5.232893, -5.7257104],
                f_dc: [0.1326713, -0.8460118, -1.5064528],
                f_rest: None,
            },
            Spot {
                index: 73999,
                position: [0.45539293, -0.64157534, 0.75380474],
                opacity: -2.1756256,
                rotation: [0.62830895, 0.7114119, -0.21773082, -0.22740775],
                scale: [-11.707035, -3.7807283, -5.108385],
                f_dc: [-0.90817237, -1.0647291, -1.0610977],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "seal_sh0.ply",
        count: 101_780,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.3103808, 0.6451687, 0.05178263],
                opacity: 2.5193927,
                rotation: [0.8589295, 0.46069854, -0.0468507, -0.2186366],
                scale: [-0.96609646, -2.1996605, -2.3119144],
                f_dc: [0.6881291, 0.85494834, 0.8966531],
                f_rest: None,
            },
            Spot {
                index: 101779,
                position: [0.6425935, 0.43194073, 0.7658596],
                opacity: -4.1391587,
                rotation: [0.9739208, 0.0, -0.062330935, -0.21815827],
                scale: [-7.8050137, -7.9261804, -7.630638],
                f_dc: [0.46570355, 0.38229397, 0.32668757],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "donut_sh0.ply",
        count: 45_624,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.018263085, 0.090465255, 0.040593795],
                opacity: 6.0683856,
                rotation: [0.7263772, 0.24716961, -0.13596949, 0.25336385],
                scale: [-4.831232, -5.1504354, -5.855655],
                f_dc: [0.1274911, 1.3836876, -0.37183052],
                f_rest: None,
            },
            Spot {
                index: 45623,
                position: [-0.0680541, -0.026360484, 0.0017310565],
                opacity: 0.6293661,
                rotation: [1.0095419, -0.15441997, 0.11430894, -0.55333185],
                scale: [-5.6617756, -6.2961235, -8.5273485],
                f_dc: [0.9670575, 0.77237993, 0.27136263],
                f_rest: None,
            },
        ],
    },
];

#[test]
fn real_files_load_with_their_values() {
    for e in &EXPECTED {
        let s = load(e.file);
        assert_eq!(s.len(), e.count, "{}", e.file);
        assert_eq!(s.sh_degree, e.sh_degree, "{}", e.file);
        assert_eq!(s.sh.len(), e.count * s.sh_stride(), "{}", e.file);
        assert_eq!(s.non_finite, 0, "{}", e.file);
        for spot in &e.spots {
            let g = s.geometry[spot.index];
            let expected = SplatGeometry {
                position: spot.position,
                opacity_logit: spot.opacity,
                rotation: spot.rotation,
                log_scale: spot.scale,
                _pad: 0.0,
            };
            assert_eq!(g, expected, "{} splat {}", e.file, spot.index);
            let sh = &s.sh[spot.index * s.sh_stride()..][..s.sh_stride()];
            assert_eq!(sh[..3], spot.f_dc, "{} splat {}", e.file, spot.index);
            if let Some(rest) = spot.f_rest {
                // Channel-major in the file, coefficient-major decoded: f_rest_0 is
                // R of coefficient 1, f_rest_15 G of it, f_rest_30 B; 14/29/44 are the
                // same channels of coefficient 15.
                let decoded = [sh[3], sh[45], sh[4], sh[46], sh[5], sh[47]];
                assert_eq!(decoded, rest, "{} splat {}", e.file, spot.index);
            }
        }
    }
}

#[test]
fn sh_stride_follows_degree() {
    assert_eq!(load("angel_sh0.ply").sh_stride(), 3);
    assert_eq!(load("train_3pts_sh3.ply").sh_stride(), 48);
    assert!(!load("train_3pts_sh3.ply").is_empty());
}
