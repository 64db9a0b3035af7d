//! A plain CPU rasterizer of the reference semantics (DESIGN.md), written for clarity:
//! every splat projected in f64, all of them sorted by depth, then every pixel blends
//! every splat front to back. No tiles, no extents, no shortcuts: the GPU image must
//! match it. Also image comparison helpers.
#![allow(dead_code)]

use bevy::math::{DMat3, DMat4, DVec2, DVec3, DVec4};
use bevy_splat::asset::SplatGeometry;

const SH_C0: f64 = 0.28209479177387814;
const SH_C1: f64 = 0.4886025119029199;
const SH_C2: [f64; 5] = [
    1.0925484305920792,
    -1.0925484305920792,
    0.31539156525252005,
    -1.0925484305920792,
    0.5462742152960396,
];
const SH_C3: [f64; 7] = [
    -0.5900435899266435,
    2.890611442640554,
    -0.4570457994644658,
    0.3731763325901154,
    -0.4570457994644658,
    1.445305721320277,
    -0.5900435899266435,
];

/// A pinhole camera in OpenCV axes (x right, y down, z forward), or an orthographic
/// one (pixel = f·x + c, no division by depth).
#[derive(Clone, Copy, Debug)]
pub struct PinholeCamera {
    pub cam_from_world: DMat4,
    pub fx: f64,
    pub fy: f64,
    pub cx: f64,
    pub cy: f64,
    pub width: u32,
    pub height: u32,
    pub near: f64,
    pub orthographic: bool,
}

impl PinholeCamera {
    /// The camera of a Bevy transform (looking down its −Z, +Y up) with a vertical
    /// field of view, principal point at the centre.
    pub fn from_bevy(
        transform: &bevy::transform::components::Transform,
        fov_y: f32,
        width: u32,
        height: u32,
        near: f32,
    ) -> Self {
        let world_from_view = transform.to_matrix().as_dmat4();
        let cv_from_view = DMat4::from_diagonal(DVec4::new(1.0, -1.0, -1.0, 1.0));
        let fy = f64::from(height) / 2.0 / (f64::from(fov_y) / 2.0).tan();
        Self {
            cam_from_world: cv_from_view * world_from_view.inverse(),
            fx: fy,
            fy,
            cx: f64::from(width) / 2.0,
            cy: f64::from(height) / 2.0,
            width,
            height,
            near: f64::from(near),
            orthographic: false,
        }
    }

    /// An orthographic camera at a Bevy transform showing `view_height` world units
    /// from top to bottom (square pixels), with its volume starting at `near` (which
    /// may be negative: behind the camera).
    pub fn orthographic_from_bevy(
        transform: &bevy::transform::components::Transform,
        view_height: f32,
        width: u32,
        height: u32,
        near: f32,
    ) -> Self {
        let f = f64::from(height) / f64::from(view_height);
        Self {
            fx: f,
            fy: f,
            orthographic: true,
            ..Self::from_bevy(transform, 1.0, width, height, near)
        }
    }

    fn centre(&self) -> DVec3 {
        self.cam_from_world.inverse().w_axis.truncate()
    }
}

struct Projected {
    mean: DVec2,
    conic: [f64; 3],
    opacity: f64,
    colour: DVec3,
    depth: f64,
    /// Which cloud of the input, and which of its splats.
    source: (usize, usize),
}

fn sigmoid_of_logit(logit: f32) -> Option<f64> {
    if logit.is_nan() {
        return None;
    }
    Some(1.0 / (1.0 + (-f64::from(logit)).exp()))
}

fn sh_colour(sh: &[f32], degree: u8, dir: DVec3) -> DVec3 {
    let k = |i: usize| DVec3::new(sh[3 * i] as f64, sh[3 * i + 1] as f64, sh[3 * i + 2] as f64);
    let (x, y, z) = (dir.x, dir.y, dir.z);
    let mut c = SH_C0 * k(0);
    if degree >= 1 {
        c += SH_C1 * (-y * k(1) + z * k(2) - x * k(3));
    }
    if degree >= 2 {
        let (xx, yy, zz) = (x * x, y * y, z * z);
        c += SH_C2[0] * x * y * k(4)
            + SH_C2[1] * y * z * k(5)
            + SH_C2[2] * (2.0 * zz - xx - yy) * k(6)
            + SH_C2[3] * x * z * k(7)
            + SH_C2[4] * (xx - yy) * k(8);
    }
    if degree >= 3 {
        let (xx, yy, zz) = (x * x, y * y, z * z);
        c += SH_C3[0] * y * (3.0 * xx - yy) * k(9)
            + SH_C3[1] * x * y * z * k(10)
            + SH_C3[2] * y * (4.0 * zz - xx - yy) * k(11)
            + SH_C3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy) * k(12)
            + SH_C3[4] * x * (4.0 * zz - xx - yy) * k(13)
            + SH_C3[5] * z * (xx - yy) * k(14)
            + SH_C3[6] * x * (xx - 3.0 * yy) * k(15);
    }
    (c + 0.5).max(DVec3::ZERO)
}

fn project(
    g: &SplatGeometry,
    sh: &[f32],
    degree: u8,
    camera: &PinholeCamera,
    world_from_cloud: DMat4,
) -> Option<Projected> {
    // Culling of invalid data: NaN anywhere; ±∞ anywhere but a −∞ log-scale (scale 0)
    // and an infinite opacity logit (opacity 0 or 1).
    let position = DVec3::from_array(g.position.map(f64::from));
    let rotation = DVec4::from_array(g.rotation.map(f64::from));
    if !position.is_finite() || !rotation.is_finite() || sh.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if g.log_scale
        .iter()
        .any(|&s| s.is_nan() || s == f32::INFINITY)
    {
        return None;
    }
    let opacity = sigmoid_of_logit(g.opacity_logit)?;
    if opacity < 1.0 / 255.0 {
        return None;
    }
    let cam_from_cloud = camera.cam_from_world * world_from_cloud;
    let p = cam_from_cloud.transform_point3(position);
    if p.z < camera.near {
        return None;
    }
    let norm = rotation.length();
    if norm == 0.0 {
        return None;
    }
    let q = rotation / norm;
    let (w, x, y, z) = (q.x, q.y, q.z, q.w);
    let r = DMat3::from_cols(
        DVec3::new(
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ),
        DVec3::new(
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ),
        DVec3::new(
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ),
    );
    let s = DMat3::from_diagonal(DVec3::from_array(g.log_scale.map(|v| f64::from(v).exp())));
    let a = DMat3::from_mat4(cam_from_cloud);
    let m = a * r * s;
    let cov = m * m.transpose();

    // J is 2×3; build it as the rows j0, j1.
    let (j0, j1, mean) = if camera.orthographic {
        // An affine projection: J is constant.
        let mean = DVec2::new(camera.fx * p.x + camera.cx, camera.fy * p.y + camera.cy);
        (
            DVec3::new(camera.fx, 0.0, 0.0),
            DVec3::new(0.0, camera.fy, 0.0),
            mean,
        )
    } else {
        // EWA Jacobian with the reference's clamp of x/z, y/z.
        let (w_px, h_px) = (f64::from(camera.width), f64::from(camera.height));
        let tan_x = 0.5 * w_px / camera.fx;
        let tan_y = 0.5 * h_px / camera.fy;
        let lim_x_pos = (w_px - camera.cx) / camera.fx + 0.3 * tan_x;
        let lim_x_neg = camera.cx / camera.fx + 0.3 * tan_x;
        let lim_y_pos = (h_px - camera.cy) / camera.fy + 0.3 * tan_y;
        let lim_y_neg = camera.cy / camera.fy + 0.3 * tan_y;
        let tx = p.z * (p.x / p.z).clamp(-lim_x_neg, lim_x_pos);
        let ty = p.z * (p.y / p.z).clamp(-lim_y_neg, lim_y_pos);
        let mean = DVec2::new(
            camera.fx * p.x / p.z + camera.cx,
            camera.fy * p.y / p.z + camera.cy,
        );
        (
            DVec3::new(camera.fx / p.z, 0.0, -camera.fx * tx / (p.z * p.z)),
            DVec3::new(0.0, camera.fy / p.z, -camera.fy * ty / (p.z * p.z)),
            mean,
        )
    };
    let c00 = j0.dot(cov * j0) + 0.3;
    let c01 = j0.dot(cov * j1);
    let c11 = j1.dot(cov * j1) + 0.3;
    let det = c00 * c11 - c01 * c01;
    if det <= 0.0 || !det.is_finite() {
        return None;
    }
    let camera_in_cloud = world_from_cloud.inverse().transform_point3(camera.centre());
    let dir = (position - camera_in_cloud).normalize();
    Some(Projected {
        mean,
        conic: [c11 / det, -c01 / det, c00 / det],
        opacity,
        colour: sh_colour(sh, degree, dir),
        depth: p.z,
        source: (0, 0),
    })
}

/// A cloud to rasterize: its splats and where it stands.
pub struct CpuCloud<'a> {
    pub geometry: &'a [SplatGeometry],
    pub sh: &'a [f32],
    pub sh_degree: u8,
    pub world_from_cloud: DMat4,
}

/// Every visible splat of every cloud, projected, nearest first.
fn project_all(clouds: &[CpuCloud<'_>], camera: &PinholeCamera) -> Vec<Projected> {
    let mut splats: Vec<Projected> = clouds
        .iter()
        .enumerate()
        .flat_map(|(c, cloud)| {
            let stride = 3 * (usize::from(cloud.sh_degree) + 1).pow(2);
            cloud.geometry.iter().enumerate().filter_map(move |(i, g)| {
                let mut projected = project(
                    g,
                    &cloud.sh[i * stride..(i + 1) * stride],
                    cloud.sh_degree,
                    camera,
                    cloud.world_from_cloud,
                )?;
                projected.source = (c, i);
                Some(projected)
            })
        })
        .collect();
    splats.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    splats
}

/// Walks one pixel's splats front to back by the reference's rules, handing each
/// blended splat with its α and the transmittance before it to `blend`, until the
/// pixel saturates or `blend` says stop.
fn walk_pixel<'s>(
    splats: impl IntoIterator<Item = &'s Projected>,
    px: u32,
    py: u32,
    mut blend: impl FnMut(&Projected, f64, f64) -> bool,
) -> f64 {
    let centre = DVec2::new(f64::from(px) + 0.5, f64::from(py) + 0.5);
    let mut t = 1.0;
    for s in splats {
        let d = s.mean - centre;
        let [a, b, c] = s.conic;
        let power = 0.5 * (a * d.x * d.x + c * d.y * d.y) + b * d.x * d.y;
        if power < 0.0 {
            continue;
        }
        let alpha = (s.opacity * (-power).exp()).min(0.999);
        if alpha < 1.0 / 255.0 {
            continue;
        }
        let next = t * (1.0 - alpha);
        if next <= 1e-4 {
            break;
        }
        let go_on = blend(s, alpha, t);
        t = next;
        if !go_on {
            break;
        }
    }
    t
}

/// Premultiplied RGBA per pixel, row-major.
pub fn rasterize(clouds: &[CpuCloud<'_>], camera: &PinholeCamera) -> Vec<[f64; 4]> {
    let splats = project_all(clouds, camera);
    let mut image = Vec::with_capacity((camera.width * camera.height) as usize);
    for py in 0..camera.height {
        for px in 0..camera.width {
            let mut colour = DVec3::ZERO;
            let t = walk_pixel(&splats, px, py, |s, alpha, t| {
                colour += s.colour * alpha * t;
                true
            });
            image.push([colour.x, colour.y, colour.z, 1.0 - t]);
        }
    }
    image
}

/// Where a pixel's transmittance first falls to 0.5: the plugin's one definition of
/// a cloud's surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MedianHit {
    /// The splat's camera-space depth (its centre's z).
    pub depth: f64,
    /// The cloud (index into the input) and the splat within it.
    pub cloud: usize,
    pub splat: usize,
}

/// The median-depth hit of each of `pixels` (x, y); `None` where the transmittance
/// never falls to 0.5.
///
/// Each pixel walks only the splats whose α can reach 1/255 there (the reference
/// skips the others): an exact index, so that many pixels of a large cloud stay quick.
pub fn median_depth(
    clouds: &[CpuCloud<'_>],
    camera: &PinholeCamera,
    pixels: &[(u32, u32)],
) -> Vec<Option<MedianHit>> {
    let splats = project_all(clouds, camera);
    let cells = CellIndex::new(&splats, camera.width, camera.height);
    let mut walked = Vec::new();
    pixels
        .iter()
        .map(|&(px, py)| {
            walked.clear();
            walked.extend(cells.at(px, py).iter().map(|&i| &splats[i as usize]));
            let mut hit = None;
            walk_pixel(walked.iter().copied(), px, py, |s, alpha, t| {
                if t * (1.0 - alpha) <= 0.5 {
                    hit = Some(MedianHit {
                        depth: s.depth,
                        cloud: s.source.0,
                        splat: s.source.1,
                    });
                    return false;
                }
                true
            });
            hit
        })
        .collect()
}

/// The splats, nearest first, whose α may reach 1/255 somewhere in each square cell of
/// the image: a splat's α = opacity·exp(−power) is below 1/255 wherever its power
/// exceeds ln(255·opacity), which is outside the box bounding that ellipse.
struct CellIndex {
    columns: u32,
    cells: Vec<Vec<u32>>,
}

impl CellIndex {
    const CELL: u32 = 16;

    fn new(splats: &[Projected], width: u32, height: u32) -> Self {
        let columns = width.div_ceil(Self::CELL).max(1);
        let rows = height.div_ceil(Self::CELL).max(1);
        let mut cells = vec![Vec::new(); (columns * rows) as usize];
        for (index, s) in splats.iter().enumerate() {
            let [a, b, c] = s.conic;
            let det = a * c - b * b;
            let power = (255.0 * s.opacity).ln();
            let bounded = det > 0.0 && power >= 0.0;
            if !bounded {
                continue;
            }
            // Half-extents of {d : ½ dᵀ C d ≤ power}, a pixel wider for rounding.
            let half_x = (2.0 * power * c / det).sqrt() + 1.0;
            let half_y = (2.0 * power * a / det).sqrt() + 1.0;
            let cell_of = |v: f64, limit: u32| {
                ((v / f64::from(Self::CELL)).floor().max(0.0) as u32).min(limit - 1)
            };
            if s.mean.x + half_x < 0.0 || s.mean.y + half_y < 0.0 {
                continue;
            }
            if s.mean.x - half_x > f64::from(width) || s.mean.y - half_y > f64::from(height) {
                continue;
            }
            for cy in cell_of(s.mean.y - half_y, rows)..=cell_of(s.mean.y + half_y, rows) {
                for cx in cell_of(s.mean.x - half_x, columns)..=cell_of(s.mean.x + half_x, columns)
                {
                    cells[(cy * columns + cx) as usize].push(index as u32);
                }
            }
        }
        Self { columns, cells }
    }

    fn at(&self, px: u32, py: u32) -> &[u32] {
        let cell = (py / Self::CELL) * self.columns + px / Self::CELL;
        self.cells.get(cell as usize).map_or(&[], Vec::as_slice)
    }
}

/// What an 8-bit unorm target stores for a value.
pub fn to_unorm8(v: f64) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Peak signal-to-noise ratio of two same-sized 8-bit images, in dB (∞ when equal).
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    10.0 * (255.0f64 * 255.0 / mse).log10()
}

/// The largest absolute difference of two same-sized 8-bit images.
pub fn max_difference(a: &[u8], b: &[u8]) -> u8 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| x.abs_diff(y))
        .max()
        .unwrap_or(0)
}
