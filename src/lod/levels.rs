//! A level-of-detail tree from a file's own levels: PlayCanvas's streamed SOG stores
//! whole-scene levels, each a decimation of the one below it, without saying which
//! splat of a coarse level stands for which finer ones. Each splat of a level is
//! made the parent of the next finer level's splats nearest to it; a coarse splat
//! nearest to none is left out (a node without children would be drawn as a leaf),
//! and the coarsest level's splats hang from one root, their moment-matched merge.
//! The leaves are the finest level exactly, so a budget that covers it draws the
//! exact image, and coarser cuts draw the splats the file's own writer made.

use bevy::math::Vec3;

use super::moments::Moments;
use crate::asset::decoded::{DecodedSplats, DecodedTree, SplatGeometry};

/// The tree over `levels[0]` (the finest, the asset's splats) whose interior nodes
/// are the splats of `levels[1..]` (each coarser than the one before), in the
/// numbering [`DecodedTree`] documents. `None` with fewer than two levels or an empty
/// finest one.
pub fn tree_from_levels(levels: &[DecodedSplats]) -> Option<DecodedTree> {
    let finest = levels.first()?;
    if levels.len() < 2 || finest.is_empty() {
        return None;
    }
    let stride = finest.sh_stride();
    let leaves = finest.len() as u32;
    let mut tree = DecodedTree::default();
    // The level below's kept nodes: ids and centres.
    let mut below: Vec<(u32, Vec3)> = finest
        .geometry
        .iter()
        .enumerate()
        .map(|(i, splat)| (i as u32, Vec3::from(splat.position)))
        .collect();
    for level in &levels[1..] {
        if level.is_empty() {
            continue;
        }
        let centres: Vec<Vec3> = level
            .geometry
            .iter()
            .map(|s| Vec3::from(s.position))
            .collect();
        let grid = Grid::new(&centres);
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); centres.len()];
        for &(id, centre) in &below {
            children[grid.nearest(centre, &centres)].push(id);
        }
        let mut kept = Vec::new();
        for (i, kids) in children.into_iter().enumerate() {
            if kids.is_empty() {
                continue;
            }
            let id = leaves + tree.interior.len() as u32;
            let first = tree.children.len() as u32;
            tree.children.extend_from_slice(&kids);
            tree.child_ranges.push([first, tree.children.len() as u32]);
            tree.interior.push(level.geometry[i]);
            tree.interior_sh.extend(sh_of(level, i, stride));
            kept.push((id, centres[i]));
        }
        below = kept;
    }
    if below.len() > 1 {
        // One root over the coarsest level: its merge.
        let geometry = |id: u32| -> SplatGeometry {
            match (id as usize).checked_sub(leaves as usize) {
                None => finest.geometry[id as usize],
                Some(i) => tree.interior[i],
            }
        };
        let moments: Vec<Moments> = below
            .iter()
            .map(|&(id, _)| Moments::of_splat(&geometry(id)))
            .collect();
        let root = Moments::merge(&moments).map_or_else(
            || {
                let mean = below.iter().map(|&(_, c)| c).sum::<Vec3>() / below.len() as f32;
                Moments::weightless(mean.as_dvec3()).to_splat()
            },
            |merged| merged.to_splat(),
        );
        let total: f64 = moments.iter().map(|m| m.weight).sum();
        let mut sh = vec![0.0f32; stride];
        for (&(id, _), m) in below.iter().zip(&moments) {
            let share = if total > 0.0 {
                m.weight / total
            } else {
                1.0 / below.len() as f64
            };
            let node_sh = match (id as usize).checked_sub(leaves as usize) {
                None => &finest.sh[id as usize * stride..(id as usize + 1) * stride],
                Some(i) => &tree.interior_sh[i * stride..(i + 1) * stride],
            };
            for (out, &value) in sh.iter_mut().zip(node_sh) {
                *out += (f64::from(value) * share) as f32;
            }
        }
        let first = tree.children.len() as u32;
        tree.children.extend(below.iter().map(|&(id, _)| id));
        tree.child_ranges.push([first, tree.children.len() as u32]);
        tree.interior.push(root);
        tree.interior_sh.extend(sh);
    }
    (!tree.interior.is_empty()).then_some(tree)
}

/// Splat `i`'s SH coefficients at `stride` floats: bands the level lacks are zero,
/// bands beyond the stride dropped.
fn sh_of(level: &DecodedSplats, i: usize, stride: usize) -> impl Iterator<Item = f32> + '_ {
    let own = level.sh_stride();
    let values = &level.sh[i * own..(i + 1) * own];
    (0..stride).map(move |k| values.get(k).copied().unwrap_or(0.0))
}

/// Centres bucketed in a uniform grid, about two a cell, for nearest-centre queries.
struct Grid {
    min: Vec3,
    cell: f32,
    size: [i32; 3],
    cells: std::collections::HashMap<[i32; 3], Vec<u32>>,
}

impl Grid {
    fn new(centres: &[Vec3]) -> Self {
        let finite = centres.iter().filter(|c| c.is_finite());
        let (min, max) = finite.fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &c| {
            (lo.min(c), hi.max(c))
        });
        let (min, extent) = if min.is_finite() && max.is_finite() {
            (min, (max - min).max(Vec3::splat(1e-6)))
        } else {
            (Vec3::ZERO, Vec3::ONE)
        };
        let volume = extent.x * extent.y * extent.z;
        let cell = (volume / (centres.len() as f32 / 2.0).max(1.0))
            .cbrt()
            .max(extent.max_element() / 1024.0)
            .max(f32::MIN_POSITIVE);
        let size = (extent / cell)
            .ceil()
            .as_ivec3()
            .max(bevy::math::IVec3::ONE)
            .to_array();
        let mut grid = Self {
            min,
            cell,
            size,
            cells: std::collections::HashMap::new(),
        };
        for (i, &c) in centres.iter().enumerate() {
            grid.cells
                .entry(grid.cell_of(c))
                .or_default()
                .push(i as u32);
        }
        grid
    }

    fn cell_of(&self, c: Vec3) -> [i32; 3] {
        let at = ((c - self.min) / self.cell).floor();
        let at = if at.is_finite() {
            at.as_ivec3()
        } else {
            bevy::math::IVec3::ZERO
        };
        let size = bevy::math::IVec3::from_array(self.size);
        at.clamp(bevy::math::IVec3::ZERO, size - 1).to_array()
    }

    /// The index of the centre nearest `c` (rings of cells outward until no nearer
    /// one can lie further out); 0 for a non-finite `c`.
    fn nearest(&self, c: Vec3, centres: &[Vec3]) -> usize {
        if !c.is_finite() {
            return 0;
        }
        let [x, y, z] = self.cell_of(c);
        let mut best = (f32::INFINITY, 0usize);
        let most = self.size.into_iter().max().unwrap_or(1);
        for ring in 0..=most {
            // Every centre in this ring lies at least (ring − 1) cells away.
            if best.0.is_finite() && ((ring - 1).max(0) as f32 * self.cell).powi(2) > best.0 {
                break;
            }
            for dx in -ring..=ring {
                for dy in -ring..=ring {
                    for dz in -ring..=ring {
                        if dx.abs().max(dy.abs()).max(dz.abs()) != ring {
                            continue;
                        }
                        let Some(members) = self.cells.get(&[x + dx, y + dy, z + dz]) else {
                            continue;
                        };
                        for &i in members {
                            let d = centres[i as usize].distance_squared(c);
                            if d < best.0 || !best.0.is_finite() {
                                best = (d, i as usize);
                            }
                        }
                    }
                }
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset::GaussianSplats;
    use crate::lod::SplatLodTree;

    fn splats(positions: &[[f32; 3]]) -> DecodedSplats {
        let geometry = positions
            .iter()
            .map(|&position| SplatGeometry {
                position,
                opacity_logit: 2.0,
                rotation: [1.0, 0.0, 0.0, 0.0],
                log_scale: [-3.0; 3],
                _pad: 0.0,
            })
            .collect::<Vec<_>>();
        let sh = vec![0.25; geometry.len() * 3];
        DecodedSplats::from_parts(geometry, sh, 0, false)
    }

    #[test]
    fn each_level_parents_the_nearest_of_the_one_below_under_one_root() {
        let fine = splats(&[
            [0.0, 0.0, 0.0],
            [0.1, 0.0, 0.0],
            [5.0, 0.0, 0.0],
            [5.2, 0.0, 0.0],
        ]);
        // A coarse splat near each pair, and one near nothing.
        let coarse = splats(&[[0.05, 0.0, 0.0], [5.1, 0.0, 0.0], [50.0, 0.0, 0.0]]);
        let tree = tree_from_levels(&[fine.clone(), coarse]).expect("a tree");
        // Two kept coarse nodes (ids 4 and 5) and the root (6).
        assert_eq!(tree.interior.len(), 3);
        assert_eq!(tree.child_ranges, vec![[0, 2], [2, 4], [4, 6]]);
        assert_eq!(tree.children, vec![0, 1, 2, 3, 4, 5]);
        let asset = GaussianSplats::from(fine);
        let built = SplatLodTree::from_file(&tree, &asset).expect("it fits the cloud");
        assert_eq!(built.len(), 7);
    }

    #[test]
    fn one_level_or_none_makes_no_tree_and_odd_centres_still_find_parents() {
        let fine = splats(&[[0.0, 0.0, 0.0], [f32::NAN, 0.0, 0.0], [1.0, 1.0, 1.0]]);
        assert!(tree_from_levels(&[]).is_none());
        assert!(tree_from_levels(std::slice::from_ref(&fine)).is_none());
        let coarse = splats(&[[0.5, 0.5, 0.5]]);
        let tree = tree_from_levels(&[fine.clone(), coarse]).expect("a tree");
        // One coarse node holding all three: it is the root.
        assert_eq!(tree.child_ranges, vec![[0, 3]]);
        assert!(SplatLodTree::from_file(&tree, &GaussianSplats::from(fine)).is_some());
    }
}
